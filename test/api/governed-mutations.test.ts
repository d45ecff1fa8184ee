import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { adversaryProject, fixture, refusedCodes, runRoot, stateOf } from "../helpers/adversary.js";
import { openApi } from "../helpers/api.js";
import { parseJsonOutput, runCaesar } from "../helpers/cli.js";
import { FIXTURE_BIN, git, taskDir } from "../helpers/repo.js";

/**
 * The HTTP mutations from inside a task: a `caesar serve` an agent starts carries that task's
 * credentials, so its mutations act as the task — on its subtree only, its delegations nested. Served
 * here in process with the credentials of a real running task.
 */
describe("the HTTP API inside a task", () => {
  const saved = {
    id: process.env.CAESAR_TASK_ID,
    token: process.env.CAESAR_TASK_TOKEN,
    xdg: process.env.XDG_CONFIG_HOME,
  };
  afterAll(() => {
    for (const [key, value] of [
      ["CAESAR_TASK_ID", saved.id],
      ["CAESAR_TASK_TOKEN", saved.token],
      ["XDG_CONFIG_HOME", saved.xdg],
    ] as const) {
      if (value === undefined) delete process.env[key];
      else process.env[key] = value;
    }
  });

  it("cancels, answers and applies only within the task's subtree, and delegates as a nested request", async () => {
    const { root, env } = adversaryProject("", {
      leaker: fixture("leak-credentials"),
      writer: join(FIXTURE_BIN, "writer.sh"),
    });
    const head = git(root, "rev-parse", "HEAD");
    const { id: victim } = await runRoot(root, env, ["--agent", "writer", "write out.txt"]);
    const inside = parseJsonOutput<{ task_id: string }>(
      await runCaesar(["run", "--detach", "--json", "--agent", "leaker", "--mode", "write", "serve"], {
        cwd: root,
        env,
      }),
    ).task_id;
    try {
      const file = join(taskDir(root, inside), "credentials.json");
      const deadline = Date.now() + 60_000;
      let credentials: { id: string; token: string } | undefined;
      while (!credentials) {
        try {
          credentials = JSON.parse(readFileSync(file, "utf8"));
        } catch {
          if (Date.now() > deadline) throw new Error("no credentials");
          await new Promise((resolve) => setTimeout(resolve, 200));
        }
      }
      process.env.CAESAR_TASK_ID = credentials!.id;
      process.env.CAESAR_TASK_TOKEN = credentials!.token;
      process.env.XDG_CONFIG_HOME = env.XDG_CONFIG_HOME;
      const api = await openApi(root);
      try {
        const errorOf = async (response: Response) => {
          const body = (await response.json()) as { error?: { code: string; summary: string } };
          return { status: response.status, ...body.error };
        };
        const cancel = await errorOf(await api.mutate("task.cancel", { task_id: victim }));
        expect(cancel).toMatchObject({
          code: "outside_subtree",
          summary: `Refused: task ${inside} may only cancel tasks it started (its subtree), not ${victim}, which it did not start.`,
        });
        const answer = await errorOf(
          await api.mutate("question.answer", { task_id: victim, question_id: "q_12345678", answer: "x" }),
        );
        expect(answer.code).toBe("outside_subtree");
        const number = stateOf(root, victim).change_number;
        const apply = await errorOf(await api.mutate("change.apply", { number }));
        expect(apply.code).toBe("outside_subtree");
        const delegate = await errorOf(
          await api.mutate("task.delegate", { objective: "a child", agent: "writer" }),
        );
        expect(delegate.code).toBe("delegation_forbidden");
        expect(refusedCodes(root, inside)).toEqual([
          "outside_subtree",
          "outside_subtree",
          "outside_subtree",
          "delegation_forbidden",
        ]);
      } finally {
        api.close();
      }
      expect(stateOf(root, victim).applied).toBeNull();
      expect(git(root, "status", "--porcelain")).toBe("");
      expect(git(root, "rev-parse", "HEAD")).toBe(head);
    } finally {
      delete process.env.CAESAR_TASK_ID;
      delete process.env.CAESAR_TASK_TOKEN;
      await runCaesar(["cancel", inside], { cwd: root, env, timeoutMs: 60_000 });
    }
  }, 300_000);
});
