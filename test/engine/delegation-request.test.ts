import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import * as acp from "@agentclientprotocol/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RACE_FLAGS } from "../../src/cli/commands/race.js";
import { RUN_FLAGS } from "../../src/cli/commands/run.js";
import { type FieldFlag, fieldFlag } from "../../src/cli/delegation-flags.js";
import {
  CALLER_FIELDS,
  CallerRequestSchema,
  type DelegationField,
  DelegationFields,
  parseDelegationRequest,
} from "../../src/engine/lifecycle/request.js";
import {
  FollowUpSchema,
  IsolationRequestSchema,
  ModeSchema,
  TriStateNetworkSchema,
} from "../../src/protocol/choices.js";
import * as z from "../../src/support/zod.js";
import { messages, startEditor } from "../helpers/acp-editor.js";
import { makeAcpProject } from "../helpers/acp-fixture.js";
import { type InProcessApi, openApi } from "../helpers/api.js";
import { parseJsonOutput, runCaesar } from "../helpers/cli.js";
import { type CaesarMcp, connectCaesar, textOf } from "../helpers/mcp.js";
import { makeRepo, writeConfig } from "../helpers/repo.js";

// biome-ignore lint/suspicious/noExplicitAny: JSON bodies and schemas are read generically
type Json = any;

/**
 * One delegation request (src/engine/lifecycle/request.ts), four front ends. The same bad request is
 * refused with the same code and the same words on the command line, over MCP and over HTTP (and by
 * `caesar acp`), each naming the field in its own spelling; and what each surface publishes — flags'
 * choices and descriptions, tool input schemas, the HTTP body schema — is the one schema's.
 */

/** Bad requests, in the request's own (wire) names, with what every surface must say. */
const BAD: { name: string; fields: Record<string, unknown>; says: string; field: string; flag: string }[] = [
  {
    name: "an objective with a control character",
    fields: { objective: "fix\u0007it" },
    says: "contains the control character U+0007 at character 4",
    field: "objective",
    flag: "<objective>",
  },
  {
    name: "an objective that is too long",
    fields: { objective: "a".repeat(20_001) },
    says: "is 20001 characters long; at most 20000 are allowed",
    field: "objective",
    flag: "<objective>",
  },
  {
    name: "a duration without a unit",
    fields: { objective: "x", timeout: "600" },
    says: '"600" is not a duration',
    field: "timeout",
    flag: "--timeout",
  },
  {
    name: "a duration past a week",
    fields: { objective: "x", check_timeout: "8d" },
    says: "a duration may be at most 7d",
    field: "check_timeout",
    flag: "--check-timeout",
  },
  {
    name: "an unknown mode",
    fields: { objective: "x", mode: "rw" },
    says: "expected one of read-only, write",
    field: "mode",
    flag: "--mode",
  },
  {
    name: "a constraint with an escape",
    fields: { objective: "x", constraints: ["ok", "\u001b[31mred"] },
    says: "contains the control character U+001B at character 1",
    field: "constraints[1]",
    flag: "--constraint (value 2)",
  },
];

/** `caesar run`'s command line for these fields (the objective last). */
function argvOf(fields: Record<string, unknown>): string[] {
  const flagOf = (field: string) =>
    Object.values(RUN_FLAGS).find((flag) => "field" in flag && flag.field === field)!.long;
  const argv: string[] = [];
  for (const [field, value] of Object.entries(fields)) {
    if (field === "objective") continue;
    for (const one of Array.isArray(value) ? value : [value]) argv.push(flagOf(field), String(one));
  }
  return [...argv, String(fields.objective)];
}

let root: string;
const tasks = () =>
  existsSync(join(root, ".caesar", "tasks")) ? readdirSync(join(root, ".caesar", "tasks")) : [];

beforeAll(() => {
  root = makeRepo();
  writeConfig(root, "", ["conformant"]);
});

describe("the same bad request is refused the same way on every surface", () => {
  let mcp: CaesarMcp;
  let api: InProcessApi;
  beforeAll(async () => {
    mcp = await connectCaesar(["mcp", "serve"], { cwd: root });
    api = await openApi(root);
  });
  afterAll(async () => {
    await mcp?.close();
    api?.close();
  });

  it.each(BAD)("$name: invalid_argument from caesar run, caesar_delegate and task.delegate", async (bad) => {
    const fields = { agent: "conformant", ...bad.fields };

    const cli = await runCaesar(["run", "--json", ...argvOf(fields)], { cwd: root });
    expect(cli.code, cli.stderr).toBe(2);
    const cliError = parseJsonOutput<{ error: Json }>(cli).error;
    expect(cliError.code).toBe("invalid_argument");
    expect(cliError.summary.startsWith(`Invalid argument at ${bad.flag}: `), cliError.summary).toBe(true);
    expect(cliError.summary).toContain(bad.says);

    const tool = await mcp.call("caesar_delegate", fields);
    expect(tool.isError).toBe(true);
    const toolError = (tool.structuredContent as { error: Json }).error;
    expect(toolError.code).toBe("invalid_argument");
    expect(toolError.summary).toContain(`Invalid argument at ${bad.field}: `);
    expect(toolError.summary).toContain(bad.says);
    expect(textOf(tool)).toContain("(code: invalid_argument)");

    const http = await api.mutate("task.delegate", fields);
    const httpError = ((await http.json()) as { error: Json }).error;
    expect(http.status).toBe(400);
    expect(httpError.code).toBe("invalid_argument");
    expect(httpError.summary).toContain(`Invalid argument at $.arguments.${bad.field}: `);
    expect(httpError.summary).toContain(bad.says);

    // The words after the field's name are the same on all three: one parse.
    const said = (summary: string, spelled: string) =>
      summary.slice(summary.indexOf(spelled) + spelled.length);
    expect(said(toolError.summary, `${bad.field}: `)).toBe(said(cliError.summary, `${bad.flag}: `));
    expect(said(httpError.summary, `${bad.field}: `)).toBe(said(cliError.summary, `${bad.flag}: `));
    expect(tasks()).toEqual([]);
  });

  it("a field renamed since is refused by name, saying the new one (MCP and HTTP)", async () => {
    const tool = await mcp.call("caesar_delegate", {
      objective: "x",
      agent: "conformant",
      acceptance: ["ok"],
    });
    expect((tool.structuredContent as { error: Json }).error).toMatchObject({ code: "unknown_field" });
    expect(textOf(tool)).toContain("acceptance is now acceptance_criteria");
    const http = await api.mutate("task.delegate", {
      objective: "x",
      agent: "conformant",
      timeoutMs: 60_000,
    });
    const body = (await http.json()) as { error: Json };
    expect(http.status).toBe(400);
    expect(body.error).toMatchObject({ code: "unknown_field" });
    expect(body.error.detail).toContain('timeoutMs is now timeout, a duration with a unit ("20m")');
    // A field of the request that only the command line sets is not the caller's to set.
    const remote = await mcp.call("caesar_delegate", {
      objective: "x",
      agent: "conformant",
      on: "nats://far",
    });
    expect((remote.structuredContent as { error: Json }).error).toMatchObject({ code: "unknown_field" });
    expect(tasks()).toEqual([]);
  });

  it("caesar_fanout and caesar race name the task or the contender that is refused, and start nothing", async () => {
    const fanout = await mcp.call("caesar_fanout", {
      tasks: [
        { objective: "fine", agent: "conformant" },
        { objective: "x", agent: "conformant", timeout: "soon" },
      ],
    });
    expect((fanout.structuredContent as { error: Json }).error).toMatchObject({
      code: "invalid_argument",
      summary: expect.stringContaining('Invalid argument at tasks[1].timeout: "soon" is not a duration'),
    });
    const race = await runCaesar(
      ["race", "--json", "--agent", "conformant", "--agent", "conform\u0001ant", "x"],
      {
        cwd: root,
      },
    );
    expect(race.code).toBe(2);
    expect(parseJsonOutput<{ error: Json }>(race).error).toMatchObject({
      code: "invalid_argument",
      summary: expect.stringContaining("Invalid argument at --agent: contains the control character U+0001"),
    });
    expect(tasks()).toEqual([]);
  });

  it("a good request goes through the same parse on every surface: durations in milliseconds", async () => {
    const cli = await runCaesar(
      [
        "run",
        "--json",
        "--detach",
        "--agent",
        "conformant",
        "--timeout",
        "1h30m",
        "--check-timeout",
        "90s",
        "ok",
      ],
      { cwd: root },
    );
    expect(cli.code, cli.stderr).toBe(0);
    const tool = await mcp.call("caesar_delegate", {
      objective: "ok",
      agent: "conformant",
      timeout: "1h30m",
    });
    expect(tool.isError, textOf(tool)).toBeFalsy();
    expect(tool.structuredContent).toMatchObject({ timeout_ms: 5_400_000 });
    const http = await api.mutate("task.delegate", {
      objective: "ok",
      agent: "conformant",
      timeout: "1h30m",
    });
    expect(http.status).toBe(200);
    expect(tasks()).toHaveLength(3);
  });
});

describe("caesar acp refuses the prompt the same way", () => {
  it("a prompt with a control character: the turn says why, and nothing starts", async () => {
    const project = makeAcpProject([]);
    const editor = startEditor({ cwd: project.root, args: ["--agent", "fixture-acp"] });
    try {
      await editor.agent.request(acp.methods.agent.initialize, {
        protocolVersion: acp.PROTOCOL_VERSION,
        clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false },
        clientInfo: { name: "test-editor", version: "1.0.0" },
      });
      const session = await editor.agent.request(acp.methods.agent.session.new, {
        cwd: project.root,
        mcpServers: [],
      });
      const result = await editor.agent.request(acp.methods.agent.session.prompt, {
        sessionId: session.sessionId,
        prompt: [{ type: "text", text: "fix\u0007it" }],
      });
      expect(result.stopReason).toBe("end_turn");
      expect(messages(editor.record)).toContain(
        "caesar refused the task: Invalid argument at the prompt: contains the control character U+0007 at character 4",
      );
      expect(existsSync(join(project.root, ".caesar", "tasks"))).toBe(false);
    } finally {
      editor.close();
    }
  });
});

describe("what each surface publishes is the one schema's", () => {
  const enums: [DelegationField, readonly string[]][] = [
    ["mode", ModeSchema.options],
    ["isolation", IsolationRequestSchema.options],
    ["network", TriStateNetworkSchema.options],
    ["follow_up", FollowUpSchema.options],
  ];

  it("caesar run's and caesar race's flags: a flag per field, its choices and description the field's", async () => {
    const fieldFlags = (flags: Record<string, unknown>) =>
      Object.values(flags).filter(
        (flag): flag is FieldFlag => typeof flag === "object" && !!flag && "field" in flag,
      );
    const run = fieldFlags(RUN_FLAGS);
    // Every field a person may set has its flag (the agent's own arguments come after --; who asked is
    // the CLI's to say; MCP servers are an editor's, with caesar acp).
    expect(new Set(run.map((flag) => flag.field))).toEqual(
      new Set(
        Object.keys(DelegationFields).filter(
          (f) =>
            !["objective", "extra_args", "ask_permissions", "requested_by", "mcp_servers", "images"].includes(
              f,
            ),
        ),
      ),
    );
    for (const flag of [...run, ...fieldFlags(RACE_FLAGS)]) {
      expect(flag.description.startsWith(DelegationFields[flag.field].description!), flag.long).toBe(true);
      const choices = enums.find(([field]) => field === flag.field)?.[1];
      expect(flag.choices, flag.long).toEqual(choices);
    }
    // And in the help a person reads:
    const help = await runCaesar(["run", "--help"]);
    for (const [field, choices] of enums) {
      const long = run.find((flag) => flag.field === field)!.long;
      const from = help.stdout.indexOf(`  ${long} `);
      const entry = help.stdout.slice(from, help.stdout.indexOf("\n  -", from + 1)).replace(/\s+/g, " ");
      expect(entry, long).toContain(`(choices: ${choices.map((c) => JSON.stringify(c)).join(", ")})`);
    }
    // A field flag is derived, not typed: a list for an array, a switch for a boolean.
    expect(fieldFlag("constraints", "--c <t>").kind).toBe("list");
    expect(fieldFlag("channel", "--x").kind).toBe("switch");
  });

  it("caesar_delegate, caesar_fanout and caesar_race publish the request's fields as they are parsed", async () => {
    const mcp = await connectCaesar(["mcp", "serve"], { cwd: root });
    try {
      const { tools } = await mcp.client.listTools();
      const schemaOf = (name: string) => tools.find((tool) => tool.name === name)!.inputSchema as Json;
      const { $schema: _, ...request } = z.toJSONSchema(CallerRequestSchema, {
        target: "draft-7",
        io: "input",
      });
      // caesar_delegate: the request's fields, and `wait` (how the call answers, not part of the task);
      // `agent` is described with the caller's roster (test/mcp/roster.test.ts), the rest as the request.
      const { wait, ...published } = schemaOf("caesar_delegate").properties;
      expect(published.agent.description).toMatch(/^Name of the agent to delegate to\. Available: /);
      const asRequest = (fields: Json) => ({
        ...fields,
        agent: { ...fields.agent, description: (request as Json).properties.agent.description },
      });
      const delegateFields = asRequest(published);
      expect(wait.type).toBe("boolean");
      expect({ ...schemaOf("caesar_delegate"), properties: { ...delegateFields, wait } }).toEqual({
        $schema: "http://json-schema.org/draft-07/schema#",
        ...request,
        properties: { ...delegateFields, wait },
      });
      expect(delegateFields).toEqual(request.properties);
      expect(schemaOf("caesar_delegate").additionalProperties).toBe(false);
      expect(Object.keys(delegateFields)).toEqual([...CALLER_FIELDS]);
      const task = schemaOf("caesar_fanout").properties.tasks.items;
      expect(task.properties.agent.description).toBe(published.agent.description);
      expect({ ...task, properties: asRequest(task.properties) }).toEqual(request);
      expect(schemaOf("caesar_fanout").properties.wait).toEqual(wait);
      const race = schemaOf("caesar_race").properties;
      for (const field of CALLER_FIELDS.filter(
        (f) => !["objective", "agent", "role", "isolation"].includes(f),
      )) {
        expect(race[field], field).toEqual(request.properties?.[field]);
      }
      for (const [field, choices] of enums) {
        expect(schemaOf("caesar_delegate").properties[field].enum, field).toEqual(choices);
      }
    } finally {
      await mcp.close();
    }
  });

  it("the HTTP API's task.delegate arguments are the same fields, names and rules", async () => {
    const api = await openApi(root);
    try {
      const schema = (await (await api.request("/api/mutate/v1/schema")).json()) as Json;
      const delegate = schema.oneOf.find((v: Json) => v.properties.operation.const === "task.delegate");
      const {
        $schema: _,
        description: __,
        ...request
      } = z.toJSONSchema(CallerRequestSchema, {
        target: "draft-2020-12",
        io: "input",
      });
      const { description: ___, ...published } = delegate.properties.arguments;
      expect(published).toEqual(request);
      const capabilities = (await (await api.request("/api/mutate/v1")).json()) as Json;
      const listed = capabilities.operations.find((op: Json) => op.name === "task.delegate").arguments;
      expect(listed).toBe(CALLER_FIELDS.map((f) => (f === "objective" ? `${f} (required)` : f)).join(", "));
    } finally {
      api.close();
    }
  });

  it("one parse: durations as milliseconds, names as given; a request cannot be built without it", () => {
    const request = parseDelegationRequest({ objective: "x", timeout: "1h30m", check_timeout: "1500ms" });
    expect(request).toMatchObject({ timeout: 5_400_000, check_timeout: 1_500 });
    for (const timeout of ["0s", "0.1ms", "20", "1 h", "-5m", 1200]) {
      expect(() => parseDelegationRequest({ objective: "x", timeout }), String(timeout)).toThrow(
        expect.objectContaining({ code: "invalid_argument" }),
      );
    }
    expect(() => parseDelegationRequest({ objective: "x", on: "local" }, { accept: CALLER_FIELDS })).toThrow(
      expect.objectContaining({ code: "unknown_field" }),
    );
  });
});
