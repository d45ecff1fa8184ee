import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BUILTIN_SCENARIOS, type Scenario } from "../../src/mock-model/scenario.js";
import { type MockModelServer, type RequestLogEntry, startMockModel } from "../../src/mock-model/server.js";

/** Real HTTP against the real server: one per scenario, on a free loopback port. */
async function withServer(
  scenario: Scenario,
  run: (server: MockModelServer, log: RequestLogEntry[]) => Promise<void>,
) {
  const log: RequestLogEntry[] = [];
  const server = await startMockModel({ scenario, onRequest: (entry) => log.push(entry) });
  try {
    await run(server, log);
  } finally {
    await server.close();
  }
}

/** Responses whose JSON the tests read freely (the shapes are what is under test). */
// biome-ignore lint/suspicious/noExplicitAny: the wire shapes are what the assertions check
type JsonResponse = Omit<Response, "json"> & { json(): Promise<any> };

async function post(url: string, body: unknown): Promise<JsonResponse> {
  const text = typeof body === "string" ? body : JSON.stringify(body);
  return fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: text });
}

/** The `data:` payloads of an SSE body, parsed (except the `[DONE]` sentinel). */
// biome-ignore lint/suspicious/noExplicitAny: as above
async function sse(response: JsonResponse): Promise<Record<string, any>[]> {
  const text: string = await response.text();
  return text
    .split("\n")
    .filter((line) => line.startsWith("data: ") && line !== "data: [DONE]")
    .map((line) => JSON.parse(line.slice(6)));
}

const hello = BUILTIN_SCENARIOS.hello!;

describe("mock model: OpenAI Responses", () => {
  const tools = [
    {
      type: "function",
      name: "exec_command",
      parameters: {
        type: "object",
        properties: { cmd: { type: "string" }, workdir: { type: "string" } },
        required: ["cmd"],
      },
    },
    { type: "custom", name: "apply_patch" },
    { type: "function", name: "view_image", parameters: { type: "object", properties: {} } },
  ];

  it("calls the shell tool on the first turn, arguments built from its schema (SSE)", async () => {
    await withServer(hello, async (server) => {
      const response = await post(`${server.url}/v1/responses`, {
        model: "gpt-5.5",
        stream: true,
        tools,
        input: [],
      });
      expect(response.headers.get("content-type")).toBe("text/event-stream");
      const events = await sse(response);
      const done = events.find((e) => e.type === "response.output_item.done")!;
      expect(done.item).toMatchObject({ type: "function_call", name: "exec_command", call_id: "call_1" });
      expect(JSON.parse(done.item.arguments)).toEqual({ cmd: "echo OK > hello.txt" });
      const deltas = events
        .filter((e) => e.type === "response.function_call_arguments.delta")
        .map((e) => e.delta);
      expect(deltas.join("")).toBe(done.item.arguments);
      expect(events.at(-1)!.type).toBe("response.completed");
    });
  });

  it("answers with the report once the tool result is in the conversation, as JSON when a schema is demanded", async () => {
    await withServer(hello, async (server) => {
      const input = [
        { type: "function_call", name: "exec_command", call_id: "call_1", arguments: "{}" },
        { type: "function_call_output", call_id: "call_1", output: "ok" },
      ];
      const plain = await (await post(`${server.url}/v1/responses`, { tools, input })).json();
      expect(plain.output[0].content[0].text).toContain("```json caesar:report");
      const schema = {
        type: "object",
        properties: {
          protocol: { type: "string", const: "caesar.report/v1" },
          status: { type: "string", enum: ["success", "failed"] },
          summary: { type: "string" },
          details: { type: ["string", "null"] },
        },
        required: ["protocol", "status", "summary", "details"],
        additionalProperties: false,
      };
      const strict = await (
        await post(`${server.url}/v1/responses`, {
          tools,
          input,
          text: { format: { type: "json_schema", strict: true, name: "x", schema } },
        })
      ).json();
      expect(JSON.parse(strict.output[0].content[0].text)).toEqual({
        protocol: "caesar.report/v1",
        status: "success",
        summary: "Created hello.txt containing OK.",
        details: null,
      });
    });
  });

  it("writes with codex's freeform apply_patch tool", async () => {
    await withServer(BUILTIN_SCENARIOS["write-file"]!, async (server) => {
      const body = await (await post(`${server.url}/v1/responses`, { tools, input: [] })).json();
      expect(body.output[0]).toMatchObject({ type: "custom_tool_call", name: "apply_patch" });
      expect(body.output[0].input).toBe("*** Begin Patch\n*** Add File: written.txt\n+OK\n*** End Patch\n");
    });
  });

  it("reaches a deferred MCP tool through codex's tool_search, then calls it in its namespace", async () => {
    await withServer(BUILTIN_SCENARIOS.channel!, async (server) => {
      const searchTools = [...tools, { type: "tool_search", parameters: { type: "object", properties: {} } }];
      const first = await (
        await post(`${server.url}/v1/responses`, { tools: searchTools, input: [] })
      ).json();
      expect(first.output[0]).toMatchObject({
        type: "tool_search_call",
        arguments: { query: "ask_orchestrator" },
      });
      const revealed = {
        type: "namespace",
        name: "mcp__caesar",
        tools: [
          {
            type: "function",
            name: "ask_orchestrator",
            parameters: {
              type: "object",
              properties: { question: { type: "string" } },
              required: ["question"],
            },
          },
        ],
      };
      const input = [
        { type: "tool_search_call", call_id: "call_1", arguments: { query: "ask_orchestrator" } },
        { type: "tool_search_output", call_id: "call_1", tools: [revealed] },
      ];
      const second = await (await post(`${server.url}/v1/responses`, { tools: searchTools, input })).json();
      expect(second.output[0]).toMatchObject({
        type: "function_call",
        name: "ask_orchestrator",
        namespace: "mcp__caesar",
      });
      expect(JSON.parse(second.output[0].arguments)).toEqual({ question: "Proceed with hello.txt?" });
    });
  });
});

describe("mock model: Chat Completions", () => {
  const tools = [
    {
      type: "function",
      function: {
        name: "bash",
        parameters: {
          type: "object",
          properties: { command: { type: "string" }, description: { type: "string" } },
          required: ["command", "description"],
        },
      },
    },
  ];

  it("streams a tool call in chunks that add up to the arguments, then [DONE]", async () => {
    await withServer(hello, async (server) => {
      const response = await post(`${server.url}/v1/chat/completions`, {
        model: "m",
        stream: true,
        tools,
        messages: [],
      });
      const text = await response.clone().text();
      expect(text.trimEnd().endsWith("data: [DONE]")).toBe(true);
      const chunks = await sse(response);
      const args = chunks
        .flatMap((c) => c.choices?.[0]?.delta?.tool_calls ?? [])
        .map((t: { function: { arguments?: string } }) => t.function.arguments ?? "");
      expect(JSON.parse(args.join(""))).toEqual({
        command: "echo OK > hello.txt",
        description: "Write hello.txt",
      });
      expect(chunks.some((c) => c.choices?.[0]?.finish_reason === "tool_calls")).toBe(true);
      expect(chunks.at(-1)!.usage.total_tokens).toBe(30);
    });
  });

  it("answers side calls without tools (session titles) without advancing the script", async () => {
    await withServer(hello, async (server, log) => {
      const body = await (
        await post(`${server.url}/v1/chat/completions`, { messages: [{ role: "user", content: "title?" }] })
      ).json();
      expect(body.choices[0].message.content).toBe("Mock session");
      expect(log[0]!.step).toBe(0);
    });
  });

  it("moves to the next step when the tool result comes back", async () => {
    await withServer(BUILTIN_SCENARIOS["hello-text"]!, async (server) => {
      const messages = [
        { role: "user", content: "go" },
        {
          role: "assistant",
          tool_calls: [{ id: "call_1", type: "function", function: { name: "bash", arguments: "{}" } }],
        },
        { role: "tool", tool_call_id: "call_1", content: "done" },
      ];
      const body = await (await post(`${server.url}/v1/chat/completions`, { tools, messages })).json();
      expect(body.choices[0]).toMatchObject({
        finish_reason: "stop",
        message: { content: "Done: wrote hello.txt" },
      });
    });
  });

  it("plays the next turn once a message carries its text: a resumed session, or a new run's brief", async () => {
    const scenario = BUILTIN_SCENARIOS["fix-on-retry"]!;
    const argsOf = (body: {
      choices: { message: { tool_calls?: { function: { arguments: string } }[] } }[];
    }) => JSON.parse(body.choices[0]!.message.tool_calls![0]!.function.arguments).command;
    const firstTurn = [
      { role: "user", content: "Make sh test.sh pass" },
      {
        role: "assistant",
        tool_calls: [{ id: "call_1", type: "function", function: { name: "bash", arguments: "{}" } }],
      },
      { role: "tool", tool_call_id: "call_1", content: "" },
      { role: "assistant", content: "value.txt is written; the tests pass." },
    ];
    await withServer(scenario, async (server, log) => {
      // The first turn again (no follow-up yet): the report, then nothing more.
      const again = await (
        await post(`${server.url}/v1/chat/completions`, { tools, messages: firstTurn.slice(0, 3) })
      ).json();
      expect(again.choices[0].message.content).toContain("value.txt is written");
      // The same session, continued with the follow-up: the second turn's first step, after the first turn's call.
      const resumed = [
        ...firstTurn,
        { role: "user", content: "caesar ran its checks… This is attempt 2 of 2." },
      ];
      expect(
        argsOf(await (await post(`${server.url}/v1/chat/completions`, { tools, messages: resumed })).json()),
      ).toBe("echo fixed > value.txt");
      expect(log.at(-1)).toMatchObject({ step: 3, history: 1 });
      // A new run whose brief says it: the same step, from an empty history.
      const fresh = [
        { role: "user", content: "Make sh test.sh pass\n---\nThis is attempt 2 of 2 on this task." },
      ];
      expect(
        argsOf(await (await post(`${server.url}/v1/chat/completions`, { tools, messages: fresh })).json()),
      ).toBe("echo fixed > value.txt");
      expect(log.at(-1)).toMatchObject({ step: 3, history: 0 });
    });
  });
});

describe("mock model: Anthropic Messages", () => {
  const bash = {
    name: "Bash",
    input_schema: {
      type: "object",
      properties: { command: { type: "string" }, description: { type: "string" } },
      required: ["command"],
    },
  };

  it("streams a tool_use block with its input as JSON deltas", async () => {
    await withServer(hello, async (server) => {
      const response = await post(`${server.url}/v1/messages?beta=true`, {
        model: "c",
        stream: true,
        tools: [bash],
        messages: [],
      });
      const events = await sse(response);
      expect(events.map((e) => e.type)).toEqual([
        "message_start",
        "content_block_start",
        ...events.filter((e) => e.type === "content_block_delta").map(() => "content_block_delta"),
        "content_block_stop",
        "message_delta",
        "message_stop",
      ]);
      expect(events[1]!.content_block).toMatchObject({ type: "tool_use", name: "Bash", id: "toolu_1" });
      const json = events
        .filter((e) => e.type === "content_block_delta")
        .map((e) => e.delta.partial_json)
        .join("");
      expect(JSON.parse(json)).toEqual({ command: "echo OK > hello.txt", description: "Write hello.txt" });
      expect(events.find((e) => e.type === "message_delta")!.delta.stop_reason).toBe("tool_use");
    });
  });

  it("hands the report to claude's StructuredOutput tool when it is offered", async () => {
    await withServer(hello, async (server) => {
      const structured = {
        name: "StructuredOutput",
        input_schema: {
          type: "object",
          properties: {
            protocol: { type: "string" },
            status: { type: "string" },
            summary: { type: "string" },
          },
          required: ["protocol", "status", "summary"],
        },
      };
      const messages = [
        { role: "assistant", content: [{ type: "tool_use", id: "toolu_1", name: "Bash", input: {} }] },
        { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_1", content: "ok" }] },
      ];
      const body = await (
        await post(`${server.url}/v1/messages`, { tools: [bash, structured], messages })
      ).json();
      expect(body.content[0]).toMatchObject({
        type: "tool_use",
        name: "StructuredOutput",
        input: {
          protocol: "caesar.report/v1",
          status: "success",
          summary: "Created hello.txt containing OK.",
        },
      });
    });
  });

  it("selects a deferred MCP tool with ToolSearch, named as the agent listed it", async () => {
    await withServer(BUILTIN_SCENARIOS.channel!, async (server) => {
      const toolSearch = {
        name: "ToolSearch",
        input_schema: { type: "object", properties: { query: { type: "string" } } },
      };
      const messages = [
        {
          role: "user",
          content:
            "Deferred tools, available via ToolSearch:\nmcp__caesar__ask_orchestrator\nmcp__caesar__submit_report",
        },
      ];
      const body = await (
        await post(`${server.url}/v1/messages`, { tools: [bash, toolSearch], messages })
      ).json();
      expect(body.content[0]).toMatchObject({
        name: "ToolSearch",
        input: { query: "select:mcp__caesar__ask_orchestrator" },
      });
    });
  });

  it("fills templates in shell commands: the report path the brief gives, and the task id in it", async () => {
    const scenario: Scenario = {
      name: "report-by-shell",
      steps: [{ shell: 'echo \'{"task_id":"{{task_id}}"}\' > {{report_path}}' }],
    };
    await withServer(scenario, async (server) => {
      const bash = {
        name: "Bash",
        input_schema: { type: "object", properties: { command: { type: "string" } }, required: ["command"] },
      };
      const brief =
        "When you are done, write your report as JSON to /work/repo/.caesar/tasks/t_0123abcd/report.json";
      const body = await (
        await post(`${server.url}/v1/messages`, {
          tools: [bash],
          messages: [{ role: "user", content: brief }],
        })
      ).json();
      expect(body.content[0].input).toEqual({
        command: `echo '{"task_id":"t_0123abcd"}' > /work/repo/.caesar/tasks/t_0123abcd/report.json`,
      });
    });
  });

  it("writes with an absolute path when the tool asks for one, from the working directory the agent stated", async () => {
    await withServer(BUILTIN_SCENARIOS["write-file"]!, async (server) => {
      const write = {
        name: "Write",
        input_schema: {
          type: "object",
          properties: {
            file_path: { type: "string", description: "The absolute path to the file" },
            content: { type: "string" },
          },
          required: ["file_path", "content"],
        },
      };
      const body = await (
        await post(`${server.url}/v1/messages`, {
          system: "Working directory: /work/repo\n",
          tools: [write],
          messages: [],
        })
      ).json();
      expect(body.content[0].input).toEqual({ file_path: "/work/repo/written.txt", content: "OK\n" });
    });
  });

  it("counts tokens", async () => {
    await withServer(hello, async (server) => {
      const body = await (await post(`${server.url}/v1/messages/count_tokens`, { messages: [] })).json();
      expect(body.input_tokens).toBeGreaterThan(0);
    });
  });
});

describe("mock model: Gemini", () => {
  const tools = [
    {
      functionDeclarations: [
        {
          name: "run_shell_command",
          parametersJsonSchema: {
            type: "object",
            properties: {
              command: { type: "string" },
              description: { type: "string" },
              dir_path: { type: "string" },
            },
            required: ["command"],
          },
        },
      ],
    },
  ];

  it("streams a functionCall with alt=sse, and a JSON array without it", async () => {
    await withServer(hello, async (server) => {
      const url = `${server.url}/v1beta/models/gemini-2.5-flash:streamGenerateContent`;
      const events = await sse(await post(`${url}?alt=sse`, { contents: [], tools }));
      expect(events[0]!.candidates[0].content.parts[0].functionCall).toMatchObject({
        name: "run_shell_command",
        args: { command: "echo OK > hello.txt", description: "Write hello.txt" },
      });
      const array = await (await post(url, { contents: [], tools })).json();
      expect(Array.isArray(array)).toBe(true);
    });
  });

  it("answers the router's JSON request from its response schema (upper-case types)", async () => {
    await withServer(hello, async (server) => {
      const body = await (
        await post(`${server.url}/v1beta/models/gemini-2.5-flash-lite:generateContent`, {
          contents: [{ role: "user", parts: [{ text: "route" }] }],
          generationConfig: {
            responseMimeType: "application/json",
            responseSchema: {
              type: "OBJECT",
              properties: {
                reasoning: { type: "STRING" },
                model_choice: { type: "STRING", enum: ["flash", "pro"] },
              },
              required: ["reasoning", "model_choice"],
            },
          },
        })
      ).json();
      const answer = JSON.parse(body.candidates[0].content.parts[0].text);
      expect(answer).toEqual({ reasoning: "mock", model_choice: "flash" });
    });
  });

  it("pairs function responses by name to advance the script", async () => {
    await withServer(BUILTIN_SCENARIOS["hello-text"]!, async (server) => {
      const contents = [
        { role: "model", parts: [{ functionCall: { name: "run_shell_command", args: {} } }] },
        {
          role: "user",
          parts: [{ functionResponse: { name: "run_shell_command", response: { output: "" } } }],
        },
      ];
      const body = await (
        await post(`${server.url}/v1beta/models/g:generateContent`, { contents, tools })
      ).json();
      expect(body.candidates[0].content.parts[0].text).toBe("Done: wrote hello.txt");
    });
  });
});

describe("mock model: failures and side endpoints", () => {
  it("fails with each API's own error shape, and retry-after on 429", async () => {
    await withServer(BUILTIN_SCENARIOS["fail-429"]!, async (server) => {
      const openai = await post(`${server.url}/v1/chat/completions`, { messages: [] });
      expect(openai.status).toBe(429);
      expect(openai.headers.get("retry-after")).toBe("1");
      expect((await openai.json()).error.message).toBe("mock: rate limit exceeded");
      const anthropic = await (await post(`${server.url}/v1/messages`, { messages: [] })).json();
      expect(anthropic).toEqual({
        type: "error",
        error: { type: "rate_limit_error", message: "mock: rate limit exceeded" },
      });
      const gemini = await (
        await post(`${server.url}/v1beta/models/g:generateContent`, { contents: [] })
      ).json();
      expect(gemini.error).toMatchObject({ code: 429, status: "RESOURCE_EXHAUSTED" });
    });
    await withServer(BUILTIN_SCENARIOS["fail-401"]!, async (server) => {
      const response = await post(`${server.url}/v1/responses`, { input: [] });
      expect(response.status).toBe(401);
    });
  });

  it("lists models for OpenAI, Anthropic and Gemini clients alike; 404 elsewhere", async () => {
    await withServer(hello, async (server) => {
      const models = (await (await fetch(`${server.url}/v1/models`)).json()) as {
        data: { id: string }[];
        models: { name: string }[];
      };
      expect(models.data.map((m: { id: string }) => m.id)).toContain("gpt-5.5");
      expect(models.models[0]?.name).toMatch(/^models\//);
      expect((await fetch(`${server.url}/nope`)).status).toBe(404);
      expect((await post(`${server.url}/v1/responses`, "not json")).status).toBe(400);
    });
  });

  it("refuses a body over 32 MiB with 413, before reading it all", async () => {
    await withServer(hello, async (server) => {
      const response = await post(`${server.url}/v1/responses`, "x".repeat(32 * 1024 * 1024 + 1));
      expect(response.status).toBe(413);
      expect(((await response.json()) as { error: { message: string } }).error.message).toMatch(/too large/);
    });
  });

  it("listens on loopback only", async () => {
    await withServer(hello, async (server) => {
      expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    });
  });

  it("a hanging step keeps the request open until the server closes", async () => {
    const server = await startMockModel({ scenario: BUILTIN_SCENARIOS.hang! });
    const pending = post(`${server.url}/v1/chat/completions`, { messages: [] }).then(
      () => "answered",
      () => "aborted",
    );
    await new Promise((resolve) => setTimeout(resolve, 100));
    await server.close();
    expect(await pending).toBe("aborted");
  });
});

describe("mock model: scripted report through the channel tool", () => {
  let server: MockModelServer;
  beforeAll(async () => {
    server = await startMockModel({ scenario: BUILTIN_SCENARIOS.channel! });
  });
  afterAll(() => server.close());

  it("calls the channel tool by fragment whatever the CLI's prefix, with the scenario's arguments", async () => {
    for (const name of [
      "mcp__caesar__ask_orchestrator",
      "caesar_ask_orchestrator",
      "mcp_caesar_ask_orchestrator",
      "caesar-ask_orchestrator",
    ]) {
      const tools = [
        {
          type: "function",
          function: { name, parameters: { type: "object", properties: { question: { type: "string" } } } },
        },
      ];
      const body = await (await post(`${server.url}/v1/chat/completions`, { tools, messages: [] })).json();
      expect(body.choices[0].message.tool_calls[0].function.name).toBe(name);
      expect(JSON.parse(body.choices[0].message.tool_calls[0].function.arguments)).toEqual({
        question: "Proceed with hello.txt?",
      });
    }
  });
});
