import { randomUUID } from "node:crypto";
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type InProcessApi, openApi, TOKEN } from "../helpers/api.js";
import { makeRepo } from "../helpers/repo.js";
import { writeTask } from "../helpers/workspace.js";

/**
 * No request string carries a control character where none can be meant: every string field of both
 * envelopes (found by walking the JSON Schemas the server publishes, so a new field cannot slip past), every
 * query parameter, every path parameter — a 400 naming the field, before anything acts on it.
 */

// biome-ignore lint/suspicious/noExplicitAny: schemas and bodies are walked generically
type Json = any;

const CONTROLS = ["\u0000", "\u0001", "\u0007", "\u001b", "\u007f", "\u0085", "\u009b"];
const LINE_BREAKS = ["\t", "\n", "\r"];

let root: string;
let api: InProcessApi;

beforeAll(async () => {
  root = makeRepo();
  writeTask(root, { id: "t_strings1", changeNumber: 1, events: [{ type: "started", agent: "alpha" }] });
  api = await openApi(root);
});

afterAll(() => api?.close());

interface StringField {
  operation: string;
  /** Path inside `arguments`, e.g. ["constraints", 0]. */
  path: (string | number)[];
  schema: Json;
  /** Free text (several lines), a name (one line), or an id (its own, stricter pattern). */
  kind: "text" | "name" | "id";
}

/** Every string an envelope's arguments can hold, per operation, from the published schema. */
function stringFields(schema: Json): StringField[] {
  const fields: StringField[] = [];
  for (const variant of schema.oneOf) {
    const operation = variant.properties.operation.const;
    const walk = (node: Json, path: (string | number)[]) => {
      if (node.type === "string") {
        if (node.const !== undefined || node.enum !== undefined) return;
        const patterns = [node.pattern, ...(node.allOf ?? []).map((p: Json) => p.pattern)].filter(Boolean);
        fields.push({
          operation,
          path,
          schema: node,
          kind: patterns.some((p: string) => p.includes("\\u0008"))
            ? "text"
            : patterns.some((p: string) => p.includes("\\u001F"))
              ? "name"
              : "id",
        });
      } else if (node.type === "array") walk(node.items, [...path, 0]);
      else if (node.type === "object") {
        for (const [key, child] of Object.entries(node.properties ?? {})) walk(child, [...path, key]);
      }
    };
    walk(variant.properties.arguments, []);
    for (const key of ["protocol", "requestId", "runId", "operation"]) {
      const top = variant.properties[key];
      // The envelope's own strings are constants or UUIDs: nothing free to carry a control character.
      expect(top.const !== undefined || top.format === "uuid", key).toBe(true);
    }
  }
  return fields;
}

/** Valid arguments for an operation, with `value` at `path`. */
function argumentsWith(field: StringField, value: string): Json {
  const base: Record<string, Json> = {
    "timeline.read": { actor: "alpha", repo: "t_strings1" },
    "repository.read": { id: "t_strings1" },
    "task.delegate": { objective: "do it" },
    "task.cancel": { task_id: "t_strings1" },
    "question.answer": { task_id: "t_strings1", question_id: "q_1", answer: "yes" },
  };
  const args = structuredClone(base[field.operation]);
  let node = args;
  for (const [i, key] of field.path.entries()) {
    if (i === field.path.length - 1) node[key] = value;
    else {
      node[key] ??= typeof field.path[i + 1] === "number" ? [] : {};
      node = node[key];
    }
  }
  return args;
}

async function send(kind: "query" | "mutate", operation: string, args: Json): Promise<Response> {
  const state = await api.state();
  return api.request(kind === "query" ? "/api/agent/v1/query" : "/api/mutate/v1/request", {
    method: "POST",
    headers: {
      "Content-Type": "application/json",
      "X-Commit-Zero": "local-demo",
      ...(kind === "mutate" ? { Authorization: `Bearer ${TOKEN}` } : {}),
    },
    body: JSON.stringify({
      protocol: kind === "query" ? "cz-agent/1" : "cz-mutate/1",
      requestId: randomUUID(),
      runId: state.runId,
      revision: state.version,
      operation,
      arguments: args,
    }),
  });
}

describe.each([
  ["query", "/api/agent/v1/schema"],
  ["mutate", "/api/mutate/v1/schema"],
] as const)("every string field of the %s envelope", (kind, schemaPath) => {
  it("refuses control characters with a 400 naming the field; free text keeps tabs and line breaks", async () => {
    const fields = stringFields(await (await api.request(schemaPath)).json());
    expect(fields.length).toBeGreaterThan(kind === "query" ? 2 : 8);
    for (const field of fields) {
      const name = `arguments${field.path.map((key) => (typeof key === "number" ? `[${key}]` : `.${key}`)).join("")}`;
      for (const control of CONTROLS) {
        const response = await send(kind, field.operation, argumentsWith(field, `ok${control}ok`));
        const body = (await response.json()) as Json;
        expect(response.status, `${name} with U+${control.charCodeAt(0).toString(16)}`).toBe(400);
        expect(body.error.summary, name).toContain(name);
        if (field.kind !== "id") expect(body.error.summary, name).toContain("control character");
        expect(
          body.error.issues.map((i: Json) => i.path),
          name,
        ).toContain(`$.${name}`);
      }
      for (const allowedOrNot of LINE_BREAKS) {
        const response = await send(kind, field.operation, argumentsWith(field, `ok${allowedOrNot}ok`));
        // Names are one line; free text may have them (and then passes validation: any status but 400).
        if (field.kind === "text") expect(response.status, name).not.toBe(400);
        else expect(response.status, name).toBe(400);
      }
    }
  });
});

describe("the issue's case: an objective with a NUL", () => {
  it("is refused (400 naming arguments.objective) and no task is created", async () => {
    const before = readdirSync(join(root, ".caesar", "tasks")).length;
    const response = await send("mutate", "task.delegate", {
      objective: "id > /tmp/pwn.txt\u0000",
      agent: "reference",
    });
    const body = (await response.json()) as Json;
    expect(response.status).toBe(400);
    expect(body.error.code).toBe("invalid_argument");
    expect(body.error.summary).toContain("arguments.objective");
    expect(body.error.summary).toContain("U+0000 at character 18");
    expect(readdirSync(join(root, ".caesar", "tasks")).length).toBe(before);
    const agent = await send("mutate", "task.delegate", { objective: "x", agent: "reference\u0000" });
    expect(((await agent.json()) as Json).error.summary).toContain("arguments.agent");
  });
});

describe("query and path parameters", () => {
  it("every route refuses a control character in a query parameter's value or name, naming it", async () => {
    for (const path of [
      "/api/tasks?limit=1%00",
      "/api/tasks/t_strings1/events?after=%01",
      "/api/stream?x=%1b%5b31m",
      "/api/state?ok%00=1",
      "/login?code=abc%0a",
      "/?x=%7f",
    ]) {
      const response = await api.request(path);
      const body = (await response.json()) as Json;
      expect(response.status, path).toBe(400);
      expect(body.error.summary, path).toMatch(/query parameter "(limit|after|x|ok\\u0000|code)"/);
      expect(body.error.summary, path).toContain("control character");
    }
  });

  it("a task id in the path with a control character is a 400, never a file name", async () => {
    const response = await api.request("/api/tasks/t_strings1%00");
    expect(response.status).toBe(400);
    expect(existsSync(join(root, ".caesar", "tasks", "t_strings1\u0000"))).toBe(false);
  });
});
