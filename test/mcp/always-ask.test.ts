import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  adversaryProject,
  detailsOf,
  expectUntouched,
  findingsOf,
  refusedCodes,
  runRoot,
  taskIds,
} from "../helpers/adversary.js";
import { FIXTURE_BIN, git } from "../helpers/repo.js";

/**
 * `always_ask` as the delegation reference has it, from the delegating agent's side: a task's agent calls
 * caesar_delegate and caesar_fanout through `caesar mcp serve` with its own credentials. An independent
 * target whose risk profile lists always_ask tools is refused with the reference's words, before any task
 * exists — for a fan-out, all or nothing; a bounded one of the same profile is not.
 */
const CALLER = join(FIXTURE_BIN, "mcp-caller.mjs");
const CONFORMANT = join(FIXTURE_BIN, "conformant.sh");
const CONFIG = `[risk_profiles.default]
delegation_policy = { mode = "allow" }

[risk_profiles.ops]
always_ask = ["shell", "  ", " git_push "]

[agents.caller]
delegates = [{ agent = "ops", mode = "independent" }, "opsb"]

[agents.ops]
risk_profile = "ops"

[agents.opsb]
risk_profile = "ops"
`;
const REFUSAL =
  'delegate target "ops" cannot run in independent mode from "caller": risk profile "ops" has always_ask entries (shell, git_push). See ZeroClaw docs, "Delegation & SubAgents" > "What\'s not supported".';

describe("always_ask", () => {
  it("refuses an independent target whose risk profile has always_ask entries, before any task or fan-out", async () => {
    const { root, env } = adversaryProject(CONFIG, {
      caller: CALLER,
      ops: CONFORMANT,
      opsb: CONFORMANT,
      other: CONFORMANT,
    });
    const head = git(root, "rev-parse", "HEAD");
    const calls = [
      { tool: "caesar_delegate", args: { objective: "Deploy", agent: "ops" } },
      {
        tool: "caesar_fanout",
        args: {
          tasks: [
            { objective: "Fine", agent: "other" },
            { objective: "Deploy", agent: "ops" },
          ],
        },
      },
      { tool: "caesar_list_agents" },
      { tool: "caesar_delegate", args: { objective: "Bounded", agent: "opsb", wait: true } },
    ];
    const { id } = await runRoot(root, env, [
      "--agent",
      "caller",
      "--mode",
      "read-only",
      JSON.stringify({ calls }),
    ]);
    const [single, fanout, listed, bounded] = detailsOf(root, id).attempts;
    expect(single).toMatchObject({ isError: true, code: "delegate_always_ask", summary: REFUSAL });
    expect(single!.text).toContain("Nothing was started.");
    expect(fanout).toMatchObject({ isError: true, code: "fanout_refused" });
    expect(fanout!.summary).toContain(`task 2 ("Deploy"): ${REFUSAL}`);
    // caesar_list_agents says the same, and why.
    const agents = (
      listed!.result as { agents: { id: string; allowed: boolean; not_allowed_because: string }[] }
    ).agents;
    expect(agents.find((agent) => agent.id === "ops")).toMatchObject({
      allowed: false,
      not_allowed_because: REFUSAL,
    });
    // A bounded target of the same profile runs (within its caller's envelope), said to be unable to ask.
    expect(bounded!.isError, bounded!.text).toBe(false);
    const child = (bounded!.result as { task_id: string }).task_id;
    expect(findingsOf(root, child).map((finding) => finding.title)).toContain(
      "always_ask could not be enforced",
    );
    // Only the caller and its bounded child exist; both refusals are on the caller's record.
    expect(taskIds(root)).toEqual([id, child].sort());
    expect(
      refusedCodes(root, id).filter((code) => code === "delegate_always_ask").length,
    ).toBeGreaterThanOrEqual(2);
    expectUntouched(root, head);
  }, 300_000);

  it("is an accepted key of a risk profile: a root task of that profile runs, said to be unable to ask", async () => {
    const { root, env } = adversaryProject('[risk_profiles.default]\nalways_ask = ["shell"]\n', {
      other: CONFORMANT,
    });
    const { id, result } = await runRoot(root, env, ["--agent", "other", "x"]);
    expect(result.code, result.stdout + result.stderr).toBe(0);
    expect(findingsOf(root, id)).toContainEqual(
      expect.objectContaining({ severity: "medium", title: "always_ask could not be enforced" }),
    );
  }, 120_000);
});
