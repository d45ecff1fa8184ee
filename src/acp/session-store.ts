import { mkdir, readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { controlPaths } from "../engine/store/control.js";
import { writeJsonAtomic } from "../support/atomic-file.js";
import { errnoOf } from "../support/errors.js";
import * as z from "../support/zod.js";

/**
 * An editor's session kept in caesar's records (`<control dir>/acp-sessions/<id>.json`): its options
 * and its turns — each a prompt and the task it became — so that a later `caesar acp` can list, load or
 * resume it. A session is a sequence of tasks in the project; the tasks keep their own records.
 */
const SESSION_ID = /^caesar-[0-9a-f]{16}$/;

const StoredSessionSchema = z.object({
  id: z.string().regex(SESSION_ID),
  cwd: z.string(),
  delegate: z.string(),
  mode: z.string(),
  model: z.string(),
  title: z.string().optional(),
  updated_at: z.iso.datetime({ offset: true }),
  turns: z.array(
    z.object({
      prompt: z.string(),
      task: z.string().optional(),
      summary: z.string().optional(),
    }),
  ),
});
export type StoredSession = z.infer<typeof StoredSessionSchema>;

function isSessionId(id: string): boolean {
  return SESSION_ID.test(id);
}

function sessionsDir(root: string): string {
  return join(controlPaths(root).dir, "acp-sessions");
}

export async function saveSession(root: string, session: Omit<StoredSession, "updated_at">): Promise<void> {
  await mkdir(sessionsDir(root), { recursive: true });
  await writeJsonAtomic(join(sessionsDir(root), `${session.id}.json`), {
    ...session,
    updated_at: new Date().toISOString(),
  });
}

/** The stored session, or undefined when there is none of that id (a record that cannot be read throws). */
export async function loadSession(root: string, id: string): Promise<StoredSession | undefined> {
  if (!isSessionId(id)) return undefined;
  let raw: string;
  try {
    raw = await readFile(join(sessionsDir(root), `${id}.json`), "utf8");
  } catch (error) {
    if (errnoOf(error) === "ENOENT") return undefined;
    throw error;
  }
  return StoredSessionSchema.parse(JSON.parse(raw));
}

/** Every stored session of the project, the most recent first. */
export async function listSessions(root: string): Promise<StoredSession[]> {
  let names: string[];
  try {
    names = await readdir(sessionsDir(root));
  } catch (error) {
    if (errnoOf(error) === "ENOENT") return [];
    throw error;
  }
  const sessions: StoredSession[] = [];
  for (const name of names) {
    if (!name.endsWith(".json")) continue;
    const session = await loadSession(root, name.slice(0, -5)).catch(() => undefined);
    if (session) sessions.push(session);
  }
  return sessions.sort((a, b) => b.updated_at.localeCompare(a.updated_at));
}
