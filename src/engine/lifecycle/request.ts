import {
  FollowUpSchema,
  IsolationRequestSchema,
  ModeSchema,
  TriStateNetworkSchema,
} from "../../protocol/choices.js";
import { McpServerSchema } from "../../protocol/mcp-server.js";
import { MAX_PROMPT_IMAGES, PromptImageSchema } from "../../protocol/prompt-image.js";
import { UsageError } from "../../support/errors.js";
import { requestDuration, requestName, requestText } from "../../support/request-strings.js";
import * as z from "../../support/zod.js";

/**
 * The one delegation request: what a front end (CLI, MCP, HTTP, ACP) asks for, before policy resolves it
 * into a plan. Every field is defined here once, with its validation and its description; each front end is
 * a codec of it — it renames its own spellings to these names, then parses with `parseDelegationRequest`,
 * so the same input is accepted or refused, with the same code, wherever it comes from. The CLI's flags,
 * the MCP tools' input schemas and the HTTP API's body schema are derived from these fields.
 *
 * Names are the wire names (snake_case), the same on MCP and HTTP; the CLI spells them as flags
 * (`--accept` for `acceptance_criteria`, `--check-timeout` for `check_timeout`…). A duration is a string
 * with units on every surface (`"20m"`); the parsed request holds milliseconds.
 */

/** The longest objective, in characters: longer material belongs in `context` (or `--context @file`). */
export const OBJECTIVE_MAX_CHARS = 20_000;
/** The longest context, in characters. */
export const CONTEXT_MAX_CHARS = 200_000;
/** The longest deadline a request may ask for, of the task or of a check. */
export const MAX_REQUEST_DURATION_MS = 7 * 86_400_000;
/** At most this many attempts per task: each one is a whole run of the agent. */
export const MAX_ATTEMPTS = 10;

const criterionList = (what: string, most: number) =>
  z.array(requestText(2_000)).max(most, { error: `at most ${most} ${what}` });

/** The fields a caller may set, with their validation and description. */
export const DelegationFields = {
  objective: requestText(
    OBJECTIVE_MAX_CHARS,
    "say what to do in a few lines, and put the material in the context",
  )
    .regex(/\S/, { error: "the objective must say something" })
    .describe(
      `What the agent should do, self-contained: it sees nothing else of your conversation (at most ${OBJECTIVE_MAX_CHARS} characters; longer material goes in the context).`,
    ),
  agent: requestName(128)
    .optional()
    .describe("The agent to run, by id (codex, claude, reference…). Give an agent or a role."),
  role: requestName(128).optional().describe("A configured role: picks the agent and its defaults."),
  mode: ModeSchema.optional().describe(
    "read-only: the agent must not change files; write: it may (default: the role's, else [policy] mode).",
  ),
  isolation: IsolationRequestSchema.optional().describe(
    "Where the agent works: worktree (a fresh git worktree), inplace (the project's files), or auto (default: a worktree for writes and checks; in place for read-only, unless nothing keeps the agent from writing).",
  ),
  network: TriStateNetworkSchema.optional().describe(
    "The agent's network: auto (default), on or off — resolved against what the agent can really control.",
  ),
  timeout: requestDuration(MAX_REQUEST_DURATION_MS)
    .optional()
    .describe(
      `Time allowed, with a unit: 90s, 20m, 1h30m, at most ${MAX_REQUEST_DURATION_MS / 86_400_000}d (default: the role's, else [policy] timeout, 30m).`,
    ),
  model: requestName(256).optional().describe("The model for the agent, where it lets caesar choose."),
  context: requestText(CONTEXT_MAX_CHARS)
    .optional()
    .describe("Background the agent needs: excerpts, history, links."),
  constraints: criterionList("constraints", 50)
    .optional()
    .describe('Rules the agent must follow, e.g. "Do not touch the public API".'),
  acceptance_criteria: criterionList("acceptance criteria", 50)
    .optional()
    .describe(
      'How the result will be judged, e.g. "npm test passes"; a success report claims they are met. One written "run: <command>" is a check.',
    ),
  checks: criterionList("checks", 20)
    .optional()
    .describe(
      "Commands caesar runs in the task's worktree after the agent exits; each must exit 0, or a success becomes partial. The project's configured checks apply too.",
    ),
  check_timeout: requestDuration(MAX_REQUEST_DURATION_MS)
    .optional()
    .describe("Each check's deadline, with a unit (default 10m), never past the task's."),
  attempts: z
    .number({ error: `expected a whole number from 1 to ${MAX_ATTEMPTS}` })
    .int({ error: `expected a whole number from 1 to ${MAX_ATTEMPTS}` })
    .min(1, { error: `expected a whole number from 1 to ${MAX_ATTEMPTS}` })
    .max(MAX_ATTEMPTS, { error: `expected a whole number from 1 to ${MAX_ATTEMPTS}` })
    .optional()
    .describe(
      `When checks fail, give the agent up to this many attempts in all (1–${MAX_ATTEMPTS}, default 1), each with the failing checks' output.`,
    ),
  follow_up: FollowUpSchema.optional().describe(
    "How a later attempt reaches the agent: resume (default) its own session where its CLI can, or fresh, a new run whose brief carries the diff so far.",
  ),
  channel: z
    .boolean()
    .optional()
    .describe(
      "Give the agent the return channel (default false): it can then report progress, ask questions and submit its report through MCP.",
    ),
  on: requestName(4_096)
    .optional()
    .describe(
      "Where to run: the NATS server URL(s) of a pool of workers, or local (default: [cluster] nats).",
    ),
  /** Arguments passed verbatim to the agent's CLI (`caesar run … -- <args>`). */
  extra_args: z.array(requestText(100_000)).max(1_000).optional(),
  /**
   * Permission requests of an ACP agent that caesar's policy allows go to a person (a question in the
   * task directory) instead of being granted at once: set by `caesar acp`, whose editor asks its user.
   */
  ask_permissions: z.boolean().optional(),
  /**
   * MCP servers for the agent, beside the return channel: the editor's, set by `caesar acp` (its user's
   * configuration). Programs in effect: never a caller's field, never taken by a worker from a message.
   */
  mcp_servers: z.array(McpServerSchema).max(50).optional(),
  /** Images that go with the brief (an editor's prompt, `caesar acp`): only to an agent that takes them. */
  images: z
    .array(PromptImageSchema)
    .max(MAX_PROMPT_IMAGES, { error: `at most ${MAX_PROMPT_IMAGES} images` })
    .optional(),
  /**
   * Which front end asked (for records): "cli", "mcp", "http"… A nested request is recorded as asked by
   * its parent task, whatever this says. (The parent itself is never part of a request: it is proven by
   * the caller's credentials — see caller.ts.)
   */
  requested_by: requestName(64).optional(),
};

export type DelegationField = keyof typeof DelegationFields;

/**
 * What a caller of the MCP tools and of the HTTP API may set: the rest is the front end's to set (who
 * asked, arguments for the agent's own CLI, the editor's permissions) or the command line's alone (`on`:
 * where a task runs, and so where the project's code is sent, is the person's choice, never a model's).
 */
export const CALLER_FIELDS = [
  "objective",
  "agent",
  "role",
  "mode",
  "isolation",
  "network",
  "timeout",
  "model",
  "context",
  "constraints",
  "acceptance_criteria",
  "checks",
  "check_timeout",
  "attempts",
  "follow_up",
  "channel",
] as const satisfies readonly DelegationField[];

const DelegationObject = z.strictObject(DelegationFields);

/** The request as a caller of MCP or HTTP sends it (strict: an unknown field is refused). */
export const CallerRequestSchema = DelegationObject.pick(
  Object.fromEntries(CALLER_FIELDS.map((field) => [field, true])) as {
    [K in (typeof CALLER_FIELDS)[number]]: true;
  },
);

/** The parsed request. Only `parseDelegationRequest` makes one: no front end can skip the parse. */
export const DelegationRequestSchema = DelegationObject.brand<"DelegationRequest">();
export type DelegationRequest = z.output<typeof DelegationRequestSchema>;
/** A request as a front end writes it before the parse (durations as text). */
export type DelegationInput = z.input<typeof DelegationObject>;

/** How a front end spells a field (or an element of one) in its refusals: `--timeout`, `tasks[1].timeout`. */
export type Spelling = (path: readonly PropertyKey[]) => string;

/** The wire spelling: `timeout`, `constraints[2]`, `tasks[1].objective`. */
export const wireSpelling: Spelling = (path) =>
  path
    .map((key, index) => (typeof key === "number" ? `[${key}]` : `${index === 0 ? "" : "."}${String(key)}`))
    .join("") || "the request";

/**
 * Names a caller may reach for that are not the request's — those fields had on one surface before the
 * request was one schema (HTTP's `timeoutMs`, `followUp`, `acceptance`), and the plan's own milliseconds
 * that a started task reports (`timeout_ms`) — with what to send instead. A caller who sends one is refused
 * (a field silently dropped would be a request silently changed) and told.
 */
export const FORMER_NAMES: Readonly<Record<string, string>> = {
  acceptance: "acceptance_criteria",
  timeoutMs: 'timeout, a duration with a unit ("20m")',
  timeout_ms: 'timeout, a duration with a unit ("20m")',
  checkTimeoutMs: 'check_timeout, a duration with a unit ("5m")',
  check_timeout_ms: 'check_timeout, a duration with a unit ("5m")',
  followUp: "follow_up",
};

/**
 * Parse a request as a front end renamed it: the one parse every surface goes through. `accept` lists the
 * fields its caller may set (any other, even a field of the request, is refused as unknown); `set` holds
 * those the front end sets itself. A refusal is a UsageError, `invalid_argument` or `unknown_field`,
 * naming each problem in the surface's own spelling.
 */
export function parseDelegationRequest(
  input: unknown,
  options: {
    accept?: readonly DelegationField[];
    set?: Partial<DelegationInput>;
    spell?: Spelling;
    /**
     * The fields a refusal of an unknown one lists, when the surface takes more than the request's
     * (caesar_delegate's `wait`): derived from its schema, default `accept`.
     */
    known?: readonly string[];
  } = {},
): DelegationRequest {
  const spell = options.spell ?? wireSpelling;
  const fields = input !== null && typeof input === "object" && !Array.isArray(input) ? input : undefined;
  if (fields && options.accept) {
    const allowed = new Set<string>(options.accept);
    const unknown = Object.keys(fields).filter((key) => !allowed.has(key));
    if (unknown.length > 0) throw unknownFields([], unknown, options.known ?? options.accept, spell);
  }
  // Not an object: the parse says so.
  return parseArguments(DelegationRequestSchema, fields ? { ...fields, ...options.set } : input, spell);
}

/**
 * Parse a front end's arguments with one of the schemas built from the request's fields (a fan-out's
 * tasks, a race's options), refusing as `parseDelegationRequest` does.
 */
export function parseArguments<S extends z.ZodType>(schema: S, input: unknown, spell: Spelling): z.output<S> {
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  throw refusalOf(result.error, spell);
}

/** A failed parse as a refusal: `unknown_field` when a field is unknown, else `invalid_argument`. */
export function refusalOf(error: z.ZodError, spell: Spelling): UsageError {
  const issues = error.issues.map((issue) => ({ path: spell(issue.path), message: issue.message }));
  const unknown = error.issues.find((issue) => issue.code === "unrecognized_keys");
  if (unknown && unknown.code === "unrecognized_keys") {
    return unknownFields(unknown.path, unknown.keys, undefined, spell, issues);
  }
  const [first, ...rest] = issues;
  return new UsageError("invalid_argument", `Invalid argument at ${first!.path}: ${first!.message}.`, {
    detail: [...rest.map((issue) => `Also at ${issue.path}: ${issue.message}.`), "Nothing was started."].join(
      "\n",
    ),
    data: { issues },
  });
}

function unknownFields(
  at: readonly PropertyKey[],
  keys: readonly string[],
  known: readonly string[] | undefined,
  spell: Spelling,
  issues?: { path: string; message: string }[],
): UsageError {
  const renamed = keys.filter((key) => FORMER_NAMES[key]).map((key) => `${key} is now ${FORMER_NAMES[key]}`);
  const where = at.length > 0 ? ` at ${spell(at)}` : "";
  return new UsageError("unknown_field", `Unknown field(s)${where}: ${keys.join(", ")}.`, {
    detail: [
      ...renamed.map((line) => `${line}.`),
      known ? `The fields are: ${known.join(", ")}.` : "",
      "Nothing was started.",
    ]
      .filter(Boolean)
      .join("\n"),
    data: { issues: issues ?? keys.map((key) => ({ path: spell([...at, key]), message: "unknown field" })) },
  });
}
