import { appendFile, readFile } from "node:fs/promises";
import * as z from "../../support/zod.js";
import { controlTaskPaths, makePrivateControlDir } from "./control.js";

/**
 * What caesar refused a task's agent (or found it had done to caesar's records), kept beside the task's
 * authoritative records — out of the agent's reach — and read back as findings when the task ends.
 */
export const RefusalSchema = z.object({
  at: z.string(),
  /** The refusal's stable code (`nested_unproven`, `outside_subtree`, `delegation_depth`, …). */
  code: z.string(),
  /** What was attempted, as caesar understood it (`run --agent b`, `apply t_1234abcd`, …). */
  action: z.string(),
  summary: z.string(),
});
export type Refusal = z.infer<typeof RefusalSchema>;

export async function appendRefusal(root: string, id: string, refusal: Omit<Refusal, "at">): Promise<void> {
  const paths = controlTaskPaths(root, id);
  await makePrivateControlDir(paths.dir);
  const line = JSON.stringify({ at: new Date().toISOString(), ...refusal });
  await appendFile(paths.refusals, `${line}\n`, { mode: 0o600 });
}

export async function readRefusals(root: string, id: string): Promise<Refusal[]> {
  let text: string;
  try {
    text = await readFile(controlTaskPaths(root, id).refusals, "utf8");
  } catch {
    return [];
  }
  const out: Refusal[] = [];
  for (const line of text.split("\n")) {
    if (line.trim() === "") continue;
    try {
      const parsed = RefusalSchema.safeParse(JSON.parse(line));
      if (parsed.success) out.push(parsed.data);
    } catch {
      // a torn line (a writer killed mid-append) is skipped
    }
  }
  return out;
}
