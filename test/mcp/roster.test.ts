import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { adversaryProject, detailsOf, refusedCodes, runRoot } from "../helpers/adversary.js";
import { connectCaesar } from "../helpers/mcp.js";
import { FIXTURE_BIN, makeRepo, writeConfig } from "../helpers/repo.js";

/**
 * The roster in caesar_delegate's `agent` description, as the delegation reference publishes it in its
 * `delegate` schema — `Name of the agent to delegate to. Available: <sorted>` or `(none configured)` —
 * for the caller the server serves: the person at the top, or the task whose agent started it. Read from
 * the agent's side: tools/list through the official MCP client.
 */
const CALLER = join(FIXTURE_BIN, "mcp-caller.mjs");
const CONFORMANT = join(FIXTURE_BIN, "conformant.sh");

type Tool = {
  name: string;
  inputSchema: { properties: Record<string, { description?: string; items?: Tool["inputSchema"] }> };
};
const agentDescription = (tools: Tool[], name = "caesar_delegate") =>
  tools.find((tool) => tool.name === name)!.inputSchema.properties.agent?.description;
const fanoutAgentDescription = (tools: Tool[]) =>
  tools.find((tool) => tool.name === "caesar_fanout")!.inputSchema.properties.tasks!.items!.properties.agent!
    .description;

/** What the caller's caesar_list_agents says it may reach, sorted. */
const allowedOf = (listed: unknown) =>
  (listed as { agents: { id: string; allowed: boolean }[] }).agents
    .filter((agent) => agent.allowed)
    .map((agent) => agent.id)
    .sort();

describe("the roster in caesar_delegate's agent description", () => {
  it("at the top: every agent the policy admits, sorted, as caesar_list_agents says", async () => {
    const root = makeRepo({ "README.md": "# demo\n" });
    writeConfig(root, '[policy]\ndenied = ["crash"]\n\n[agents.hang]\nenabled = false\n', [
      "writer",
      "conformant",
      "crash",
      "hang",
    ]);
    const mcp = await connectCaesar(["mcp", "serve"], { cwd: root });
    try {
      const { tools } = await mcp.client.listTools();
      const listed = (await mcp.call("caesar_list_agents")).structuredContent;
      const roster = allowedOf(listed);
      expect(roster).toEqual(expect.arrayContaining(["conformant", "writer"]));
      expect(roster).not.toContain("crash");
      expect(roster).not.toContain("hang");
      const expected = `Name of the agent to delegate to. Available: ${roster.join(", ")}`;
      expect(agentDescription(tools as Tool[])).toBe(expected);
      expect(fanoutAgentDescription(tools as Tool[])).toBe(expected);
    } finally {
      await mcp.close();
    }
  });

  it("inside a task: only what that task reaches, or (none configured) when its policy forbids delegation", async () => {
    const listing = JSON.stringify({ calls: [{ tool: "tools/list" }, { tool: "caesar_list_agents" }] });
    const bounded = adversaryProject(
      '[risk_profiles.default]\ndelegation_policy = { mode = "allow" }\n\n[agents.caller]\ndelegate_same_risk_profile = false\ndelegates = ["other", { agent = "third", mode = "independent" }]\n',
      { caller: CALLER, other: CONFORMANT, third: CONFORMANT, fourth: CONFORMANT },
    );
    const { id } = await runRoot(bounded.root, bounded.env, [
      "--agent",
      "caller",
      "--mode",
      "read-only",
      listing,
    ]);
    const [list, agents] = detailsOf(bounded.root, id).attempts;
    const tools = (list!.result as { tools: Tool[] }).tools;
    expect(allowedOf(agents!.result)).toEqual(["other", "third"]);
    expect(agentDescription(tools)).toBe("Name of the agent to delegate to. Available: other, third");
    expect(fanoutAgentDescription(tools)).toBe("Name of the agent to delegate to. Available: other, third");

    const forbidden = adversaryProject("", { caller: CALLER, other: CONFORMANT });
    const { id: shut } = await runRoot(forbidden.root, forbidden.env, [
      "--agent",
      "caller",
      "--mode",
      "read-only",
      listing,
    ]);
    const [shutList] = detailsOf(forbidden.root, shut).attempts;
    expect(agentDescription((shutList!.result as { tools: Tool[] }).tools)).toBe(
      "Name of the agent to delegate to. Available: (none configured)",
    );
    // Finding out whom it serves asks nothing: no refusal is on the task's record.
    expect(refusedCodes(forbidden.root, shut)).toEqual([]);
  }, 300_000);
});
