import Ajv2020 from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type InProcessApi, openApi, TOKEN } from "../helpers/api.js";
import { makeRepo } from "../helpers/repo.js";
import { writeTask } from "../helpers/workspace.js";

/**
 * Malformed envelopes, generated: every one must be refused with a 400 naming the problem — never a 500,
 * never a 409 (validation comes first) — and the JSON Schema the server publishes must reject it too.
 * Valid envelopes must pass both.
 */

const QUERY_ARGUMENTS: Record<string, string[]> = {
  "timeline.read": ["actor", "repo", "before", "limit"],
  "repository.read": ["id"],
  "change.read": ["number"],
};
const TOP = ["protocol", "requestId", "runId", "revision", "operation", "arguments"];
const CODES = [
  "unsupported_protocol",
  "unknown_operation",
  "unknown_field",
  "invalid_argument",
  "invalid_envelope",
  "invalid_json",
];
const UUID =
  /^([0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[1-8][0-9a-fA-F]{3}-[89abAB][0-9a-fA-F]{3}-[0-9a-fA-F]{12}|00000000-0000-0000-0000-000000000000|ffffffff-ffff-ffff-ffff-ffffffffffff)$/;

type Body = Record<string, unknown>;

const validQueryArguments: Record<string, fc.Arbitrary<Body>> = {
  "timeline.read": fc.record(
    {
      actor: fc.string({ minLength: 1, maxLength: 128 }),
      repo: fc.string({ minLength: 1, maxLength: 256 }),
      before: fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER }),
      limit: fc.integer({ min: 1, max: 100 }),
    },
    { requiredKeys: [] },
  ),
  "repository.read": fc.record({ id: fc.string({ minLength: 1, maxLength: 256 }) }),
  "change.read": fc.record({ number: fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER }) }),
};

const validQuery: fc.Arbitrary<Body> = fc.constantFrom(...Object.keys(QUERY_ARGUMENTS)).chain((operation) =>
  fc.record({
    protocol: fc.constant("cz-agent/1"),
    requestId: fc.uuid(),
    runId: fc.uuid(),
    revision: fc.nat(),
    operation: fc.constant(operation),
    arguments: validQueryArguments[operation]!,
  }),
);

/** Any JSON value except those `keep` accepts. */
const jsonOtherThan = (keep: (value: unknown) => boolean) =>
  fc.jsonValue().filter((value) => !keep(value) && !Object.is(value, -0));
const notUuid = fc.oneof(
  fc.string().filter((s) => !UUID.test(s)),
  jsonOtherThan((v) => typeof v === "string"),
);
const notNatural = fc.oneof(
  fc.integer({ max: -1 }),
  fc.double({ noNaN: true, noDefaultInfinity: true }).filter((x) => !Number.isInteger(x)),
  fc.constant(Number.MAX_SAFE_INTEGER + 2),
  jsonOtherThan((v) => typeof v === "number"),
);
const notObject = jsonOtherThan((v) => typeof v === "object" && v !== null && !Array.isArray(v));
const unknownKey = (allowed: string[]) =>
  fc.string({ minLength: 1, maxLength: 20 }).filter((key) => !allowed.includes(key));

/** A wrong value for one argument of an operation (out of range, wrong type, too long). */
function badArgument(operation: string): fc.Arbitrary<[string, unknown]> {
  const text = (max: number) =>
    fc.oneof(
      fc.constant(""),
      fc.string({ minLength: max + 1, maxLength: max + 5 }),
      jsonOtherThan((v) => typeof v === "string"),
      // A control character anywhere in a name (NUL, ESC, a line break, DEL, a C1 control).
      fc
        .tuple(
          fc.string({ maxLength: 10 }),
          fc.constantFrom(..."\u0000\u0001\n\r\t\u001b\u007f\u0085"),
          fc.string({ maxLength: 10 }),
        )
        .map(([before, control, after]) => `${before}${control}${after}`),
    );
  const positive = fc.oneof(fc.integer({ max: 0 }), notNatural);
  switch (operation) {
    case "timeline.read":
      return fc.oneof(
        fc.tuple(fc.constant("actor"), text(128)),
        fc.tuple(fc.constant("repo"), text(256)),
        fc.tuple(fc.constant("before"), positive),
        fc.tuple(fc.constant("limit"), fc.oneof(fc.integer({ min: 101 }), positive)),
      );
    case "repository.read":
      return fc.tuple(fc.constant("id"), text(256));
    default:
      return fc.tuple(fc.constant("number"), positive);
  }
}

function set(target: Body, key: string, value: unknown): Body {
  // defineProperty, so that keys like "__proto__" become real (and unknown) fields of the JSON.
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
  return target;
}

/** A valid envelope made invalid in exactly one way (or a body that is no envelope at all). */
const malformedQuery: fc.Arbitrary<string> = fc.oneof(
  validQuery.chain((e) =>
    fc.constantFrom(...TOP).map((key) => {
      const { [key]: _, ...rest } = e;
      return JSON.stringify(rest);
    }),
  ),
  validQuery.chain((e) =>
    fc.tuple(unknownKey(TOP), fc.jsonValue()).map(([k, v]) => JSON.stringify(set({ ...e }, k, v))),
  ),
  validQuery.chain((e) =>
    fc
      .tuple(unknownKey(QUERY_ARGUMENTS[e.operation as string]!), fc.jsonValue())
      .map(([k, v]) => JSON.stringify({ ...e, arguments: set({ ...(e.arguments as Body) }, k, v) })),
  ),
  validQuery.chain((e) =>
    jsonOtherThan((v) => v === "cz-agent/1").map((v) => JSON.stringify({ ...e, protocol: v })),
  ),
  validQuery.chain((e) => notUuid.map((v) => JSON.stringify({ ...e, requestId: v }))),
  validQuery.chain((e) => notUuid.map((v) => JSON.stringify({ ...e, runId: v }))),
  validQuery.chain((e) => notNatural.map((v) => JSON.stringify({ ...e, revision: v }))),
  validQuery.chain((e) =>
    jsonOtherThan((v) => typeof v === "string" && v in QUERY_ARGUMENTS).map((v) =>
      JSON.stringify({ ...e, operation: v }),
    ),
  ),
  validQuery.chain((e) => notObject.map((v) => JSON.stringify({ ...e, arguments: v }))),
  validQuery.chain((e) =>
    badArgument(e.operation as string).map(([k, v]) =>
      JSON.stringify({ ...e, arguments: { ...(e.arguments as Body), [k]: v } }),
    ),
  ),
  notObject.map((v) => JSON.stringify(v)),
  fc.string().filter((text) => {
    try {
      JSON.parse(text);
      return false;
    } catch {
      return true;
    }
  }),
);

let api: InProcessApi;
let validateQuery: (value: unknown) => boolean;
let validateMutation: (value: unknown) => boolean;

beforeAll(async () => {
  const root = makeRepo();
  writeTask(root, { id: "t_fuzz0001", changeNumber: 1, events: [{ type: "started", agent: "alpha" }] });
  api = await openApi(root);
  const ajv = new Ajv2020.default({ strict: false });
  addFormats.default(ajv);
  validateQuery = ajv.compile((await (await api.request("/api/agent/v1/schema")).json()) as object);
  validateMutation = ajv.compile((await (await api.request("/api/mutate/v1/schema")).json()) as object);
});

afterAll(() => api?.close());

function post(path: string, body: string, headers: Record<string, string> = {}) {
  return api.request(path, {
    method: "POST",
    headers: { "Content-Type": "application/json", "X-Commit-Zero": "local-demo", ...headers },
    body,
  });
}

async function expect400(response: Response): Promise<void> {
  const body = (await response.json()) as { error: { code: string; summary: string; issues?: unknown[] } };
  expect(response.status, JSON.stringify(body)).toBe(400);
  expect(CODES).toContain(body.error.code);
  expect(body.error.summary.length).toBeGreaterThan(0);
}

describe("the query endpoint under 1,000 malformed envelopes", () => {
  it("answers every one with a 400 naming the problem, and the published schema rejects it too", async () => {
    await fc.assert(
      fc.asyncProperty(malformedQuery, async (text) => {
        const response = await post("/api/agent/v1/query", text);
        await expect400(response);
        let parsed: unknown;
        try {
          parsed = JSON.parse(text);
        } catch {
          return; // not JSON: nothing for a schema to say
        }
        expect(validateQuery(parsed)).toBe(false);
      }),
      { numRuns: 1000 },
    );
  });

  it("lets every valid envelope through validation (a random runId is then stale: 409), as the schema does", async () => {
    await fc.assert(
      fc.asyncProperty(validQuery, async (envelope) => {
        expect(validateQuery(envelope)).toBe(true);
        const response = await post("/api/agent/v1/query", JSON.stringify(envelope));
        expect(response.status).toBe(409);
        expect(((await response.json()) as { error: { code: string } }).error.code).toBe("stale_run");
      }),
      { numRuns: 200 },
    );
  });
});

describe("the mutation endpoint under malformed envelopes", () => {
  const operations = ["task.delegate", "task.cancel", "question.answer", "change.apply"];
  const validMutation = fc.constantFrom(...operations).chain((operation) =>
    fc.record({
      protocol: fc.constant("cz-mutate/1"),
      requestId: fc.uuid(),
      runId: fc.uuid(),
      revision: fc.nat(),
      operation: fc.constant(operation),
      arguments: {
        "task.delegate": fc.record({ objective: fc.constant("do it") }),
        "task.cancel": fc.record({ task_id: fc.constant("t_fuzz0001") }),
        "question.answer": fc.record({
          task_id: fc.constant("t_fuzz0001"),
          question_id: fc.constant("q_1"),
          answer: fc.string(),
        }),
        "change.apply": fc.record({ number: fc.integer({ min: 1 }) }),
      }[operation]!,
    }),
  );
  const MUTATION_TOP = TOP;
  const malformedMutation = fc.oneof(
    validMutation.chain((e) =>
      fc.constantFrom(...MUTATION_TOP).map((key) => {
        const { [key]: _, ...rest } = e as Body;
        return JSON.stringify(rest);
      }),
    ),
    validMutation.chain((e) =>
      fc.tuple(unknownKey(MUTATION_TOP), fc.jsonValue()).map(([k, v]) => JSON.stringify(set({ ...e }, k, v))),
    ),
    validMutation.chain((e) =>
      fc
        .tuple(fc.constantFrom("colour", "__proto__", "force2"), fc.jsonValue())
        .map(([k, v]) => JSON.stringify({ ...e, arguments: set({ ...(e.arguments as Body) }, k, v) })),
    ),
    validMutation.chain((e) =>
      jsonOtherThan((v) => v === "cz-mutate/1").map((v) => JSON.stringify({ ...e, protocol: v })),
    ),
    validMutation.chain((e) => notNatural.map((v) => JSON.stringify({ ...e, revision: v }))),
    validMutation.map((e) => JSON.stringify({ ...e, operation: "task.delete" })),
    validMutation.chain((e) =>
      fc
        .constantFrom("../etc", "", "t_ok/..", "a".repeat(200), "..", "t_x..y")
        .map((id) => JSON.stringify({ ...e, operation: "task.cancel", arguments: { task_id: id } })),
    ),
    validMutation.map((e) =>
      JSON.stringify({ ...e, operation: "task.delegate", arguments: { objective: "   " } }),
    ),
    validMutation.chain((e) =>
      fc
        .tuple(
          fc.constantFrom("objective", "agent", "role", "model", "context"),
          fc.constantFrom("\u0000", "\u0008", "\u001b[2J", "\u007f", "\u009b"),
        )
        .map(([field, control]) =>
          JSON.stringify({
            ...e,
            operation: "task.delegate",
            arguments: { objective: "do it", [field]: `x${control}y` },
          }),
        ),
    ),
    notObject.map((v) => JSON.stringify(v)),
  );

  it("answers 500 of them with a 400 (token and headers in order), matching the published schema", async () => {
    await fc.assert(
      fc.asyncProperty(malformedMutation, async (text) => {
        await expect400(await post("/api/mutate/v1/request", text, { Authorization: `Bearer ${TOKEN}` }));
        expect(validateMutation(JSON.parse(text))).toBe(false);
      }),
      { numRuns: 500 },
    );
  });
});
