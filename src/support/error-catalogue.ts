/**
 * The error catalogue: every code caesar gives its users, with the exit status of the command that meets
 * it, the status of the HTTP API's answer, and one line saying what it means. A closed set: `CaesarError`
 * and `ApiError` take only these codes (tsc refuses any other), test/support/error-catalogue.test.ts finds
 * the codes written in any other way (a task's `error`, an `error` event, a refusal record), and
 * docs/errors.md is generated from this file (`npm run docs:errors`).
 *
 * These are caesar's own codes, kept apart from wire codes: JSON-RPC's numbers (ACP, MCP), HTTP statuses,
 * the codes of the model providers the mock model imitates. The documents' schemas keep `code` a string,
 * so that a reader accepts the codes of another version of caesar; what caesar writes is an `ErrorCode`.
 *
 * scripts/errors-doc.mjs reads this file's syntax, not its value: each entry is a literal, with one doc
 * comment (one sentence) above it.
 */

/** The statuses the HTTP API answers errors with. */
export type HttpStatus = 400 | 401 | 403 | 404 | 409 | 413 | 415 | 422 | 500 | 507;

export interface ErrorEntry {
  /** The section of docs/errors.md. */
  readonly area: ErrorArea;
  /**
   * The exit status of the caesar command that fails with it: 1 a failure or refusal, 2 a usage or
   * configuration problem (`caesar run` exits 1 for every code that ends a task). Null: no command fails
   * with it (a notice in a task's events).
   */
  readonly exit: 1 | 2 | null;
  /**
   * The status the HTTP API answers with when the error reaches it. Null: never an HTTP error (it is in a
   * task's state and events, which the API serves with 200).
   */
  readonly http: HttpStatus | null;
  /**
   * A refusal that governs an agent: when the request comes from inside a task, caesar records it against
   * that task (an `error` event, and a report finding: `high` for an evasion, `medium` for a limit).
   */
  readonly governance?: "evasion" | "limit";
}

/** The sections of docs/errors.md, in order, with what they have in common. */
export const ERROR_AREAS = {
  usage: {
    title: "Command lines",
    about: "A command line caesar cannot act on. Nothing was done.",
  },
  config: {
    title: "Configuration",
    about: "A configuration file, agent or role that cannot be used as written; the message names the entry.",
  },
  tasks: {
    title: "Starting and finding tasks",
    about: "What `caesar run`, `race`, `status`, `cancel`, `answer` (and their MCP tools) refuse.",
  },
  policy: {
    title: "Governance",
    about:
      "Refusals that govern an agent. When the request comes from inside a task, caesar records it against that task: an `error` event while it runs, and a finding in its report (`high` for an evasion, `medium` for a limit).",
  },
  checks: {
    title: "Checks",
    about: "Checks that cannot run as asked ([checks.md](checks.md)). Nothing was started.",
  },
  results: {
    title: "Diffs and applying",
    about: "`caesar diff` and `caesar apply` (and `change.apply`). Nothing was changed.",
  },
  endings: {
    title: "How a task ended",
    about:
      "The `error.code` of a finished task's state, also carried by its last `error` event. A code of another section can end a task too, when it is what stopped the task's conductor.",
  },
  events: {
    title: "Notices",
    about: "Codes of `error` events that do not end the task.",
  },
  chat: {
    title: "Chat",
    about: "`caesar chat` and its MCP tools ([chat.md](chat.md)).",
  },
  mcp: {
    title: "MCP",
    about: "`caesar mcp install` and the tools of `caesar mcp serve` ([mcp.md](mcp.md)).",
  },
  http: {
    title: "HTTP API and its clients",
    about:
      "`caesar serve`, its API ([api.md](api.md)), and the commands that talk to it (`caesar query`, `caesar serve login`).",
  },
  cluster: {
    title: "Cluster",
    about: "Tasks sent to other machines over NATS ([cluster.md](cluster.md)).",
  },
  system: {
    title: "Git, files and documents",
    about: "What caesar needs from the machine and from the files it reads.",
  },
  mock_model: {
    title: "Mock model",
    about: "`caesar mock-model` ([mock-model.md](mock-model.md)).",
  },
  conformance: {
    title: "Conformance kit",
    about: "`caesar conformance` ([conformance.md](conformance.md)).",
  },
} as const;

export type ErrorArea = keyof typeof ERROR_AREAS;

export const ERRORS = {
  // ── Command lines ──────────────────────────────────────────────────────────────────────────────────
  /** `--agent` and `--role` given together: a role picks its own agent. */
  agent_and_role: { area: "usage", exit: 2, http: 422 },
  /** The command would run a real task, which may spend tokens: run it again with `--yes`. */
  confirmation_needed: { area: "usage", exit: 2, http: 422 },
  /** Two options that exclude each other were given together. */
  conflicting_option: { area: "usage", exit: 2, http: 422 },
  /** The current directory no longer exists (it was removed from under the shell). */
  cwd_missing: { area: "usage", exit: 2, http: 422 },
  /** More arguments than the command takes. */
  excess_arguments: { area: "usage", exit: 2, http: 422 },
  /** An argument is malformed: a command's, a query parameter, or a field of a request's `arguments`. */
  invalid_argument: { area: "usage", exit: 2, http: 400 },
  /** A duration without a unit, or not positive (`1500ms`, `90s`, `1h30m`, `2d` are durations). */
  invalid_duration: { area: "usage", exit: 2, http: 422 },
  /** An `--env` that is not `KEY=VALUE`. */
  invalid_env: { area: "usage", exit: 2, http: 422 },
  /** An option's value is not one the option accepts. */
  invalid_option: { area: "usage", exit: 2, http: 422 },
  /** A required argument of the command is missing. */
  missing_argument: { area: "usage", exit: 2, http: 422 },
  /** A required option is missing. */
  missing_mandatory_option_value: { area: "usage", exit: 2, http: 422 },
  /** An option that takes a value was given none. */
  option_missing_argument: { area: "usage", exit: 2, http: 422 },
  /** A race needs an objective and 2 or more agents, or the ids of a race to compare again, not both. */
  race_arguments: { area: "usage", exit: 2, http: 422 },
  /** `--root` names no existing directory. */
  root_not_found: { area: "usage", exit: 2, http: 404 },
  /** An argument after the objective: quote the objective whole, and put agent arguments after `--`. */
  stray_operand: { area: "usage", exit: 2, http: 422 },
  /** No such command. */
  unknown_command: { area: "usage", exit: 2, http: 422 },
  /** An unknown field in a request (a delegation's, an envelope); a renamed one is named with its new name. */
  unknown_field: { area: "usage", exit: 2, http: 400 },
  /** No such option for this command. */
  unknown_option: { area: "usage", exit: 2, http: 422 },
  /** The file an `@file` option value names cannot be read. */
  unreadable_file: { area: "usage", exit: 2, http: 422 },
  /** A command line the parser refused for a reason of its own (none of the above). */
  usage_error: { area: "usage", exit: 2, http: 422 },

  // ── Configuration ──────────────────────────────────────────────────────────────────────────────────
  /** An ACP agent's `args` hold `{{prompt}}`: caesar sends the brief in the session instead. */
  config_acp_prompt: { area: "config", exit: 2, http: 422 },
  /** A `[worktree]` path is not a path inside the project. */
  config_bad_path: { area: "config", exit: 2, http: 422 },
  /** One configuration file declares the same `[[agent]]` id twice. */
  config_duplicate_agent: { area: "config", exit: 2, http: 422 },
  /** Entries of the configuration are invalid or unknown; each is named, with the layer it comes from. */
  config_invalid: { area: "config", exit: 2, http: 422 },
  /** A custom agent's `args` have no `{{prompt}}`: it would never receive the objective. */
  config_missing_prompt: { area: "config", exit: 2, http: 422 },
  /** A custom agent has `cwd_mode = "flag"` but no `{{workspace}}` in its `args`. */
  config_missing_workspace: { area: "config", exit: 2, http: 422 },
  /** A configuration file is not valid TOML. */
  config_syntax: { area: "config", exit: 2, http: 422 },
  /** An unknown `{{token}}` in a custom agent's `args`. */
  config_unknown_token: { area: "config", exit: 2, http: 422 },
  /** `--global` and `--local` together: pick one configuration layer. */
  conflicting_layers: { area: "config", exit: 2, http: 422 },
  /** `caesar agents add` was given an agent definition that is not valid. */
  invalid_agent: { area: "config", exit: 2, http: 422 },
  /** `caesar role add` was given a role definition that is not valid. */
  invalid_role: { area: "config", exit: 2, http: 422 },
  /** The layer named does not declare that agent or role, so it cannot remove it. */
  not_declared: { area: "config", exit: 1, http: 422 },
  /** None of a role's agents is installed and allowed. */
  role_no_agent: { area: "config", exit: 1, http: 422 },
  /** A role's `system_prompt_file` cannot be read. */
  role_prompt_missing: { area: "config", exit: 2, http: 422 },
  /** An `[[agent]]` whose program cannot be found where its `bin` says: refused before anything starts. */
  agent_program_missing: { area: "config", exit: 2, http: 422 },
  /** No agent with that id, built in or declared; the message suggests the closest. */
  unknown_agent: { area: "config", exit: 2, http: 422 },
  /** No role with that name; the message suggests the closest. */
  unknown_role: { area: "config", exit: 2, http: 422 },

  // ── Starting and finding tasks ─────────────────────────────────────────────────────────────────────
  /** The question was answered already; the first answer stands, and nothing was written. */
  already_answered: { area: "tasks", exit: 1, http: 409 },
  /** A task id prefix matches several tasks: type more of the id. */
  ambiguous_task_id: { area: "tasks", exit: 2, http: 422 },
  /** A fan-out was refused whole because some of its tasks would be refused (admission is all or none). */
  fanout_refused: { area: "tasks", exit: 1, http: 422 },
  /** `caesar_await` was given arguments that are not valid. */
  invalid_await: { area: "tasks", exit: 2, http: 422 },
  /** Not a valid question id. */
  invalid_question_id: { area: "tasks", exit: 2, http: 422 },
  /** Not a valid race id (`r_` and eight hex digits). */
  invalid_race_id: { area: "tasks", exit: 2, http: 422 },
  /** Not a valid task id. */
  invalid_task_id: { area: "tasks", exit: 2, http: 422 },
  /** The agent cannot have the network in this mode; pick another `--network`, mode or agent. */
  network_unavailable: { area: "tasks", exit: 1, http: 422 },
  /** The request carries images (an editor's prompt) and the chosen agent cannot take them. */
  images_unsupported: { area: "tasks", exit: 2, http: 422 },
  /** No agent selected: pass `--agent` or `--role`. */
  no_agent: { area: "tasks", exit: 2, http: 422 },
  /** No race with that id in this project. */
  race_not_found: { area: "tasks", exit: 2, http: 404 },
  /** A task sent to other machines cannot run in place. */
  remote_inplace: { area: "tasks", exit: 2, http: 422 },
  /** A task sent to other machines needs a git repository with a commit: its code travels through git. */
  remote_needs_git: { area: "tasks", exit: 2, http: 422 },
  /** The project's conductor service did not take the task; it stays queued for the next service. */
  service_refused: { area: "tasks", exit: 1, http: 422 },
  /** The project's conductor service did not start (its log says why); created tasks stay queued. */
  service_unavailable: { area: "tasks", exit: 1, http: 422 },
  /** `[sandbox] mode = "required"`, and no OS sandbox can run here; nothing was started. */
  sandbox_unavailable: { area: "tasks", exit: 1, http: 422 },
  /** Some tasks of a batch could not be started; they are finished failed (`not_started`). */
  start_failed: { area: "tasks", exit: 1, http: 422 },
  /** No task with that id (or id prefix) in this workspace. */
  task_not_found: { area: "tasks", exit: 1, http: 404 },
  /** The task has not finished yet: wait for it, or cancel it. */
  task_running: { area: "tasks", exit: 1, http: 422 },
  /** A task's `state.json` is not a valid task state. */
  task_state_invalid: { area: "tasks", exit: 1, http: 422 },
  /** A task's `state.json` cannot be read: its directory is incomplete (`caesar gc` cleans it up). */
  task_state_missing: { area: "tasks", exit: 1, http: 422 },
  /** caesar has no record of making this task, so it will not signal the processes its directory names. */
  task_unverified: { area: "tasks", exit: 1, http: 422 },
  /** The task has no question with that id. */
  unknown_question: { area: "tasks", exit: 1, http: 404 },
  /** Worktree isolation needs a git repository with at least one commit. */
  worktree_unavailable: { area: "tasks", exit: 2, http: 422 },

  // ── Governance ─────────────────────────────────────────────────────────────────────────────────────
  /** The agent may not run here: it is denied, disabled or not allowed by the policy. */
  agent_not_allowed: { area: "policy", exit: 1, http: 422, governance: "limit" },
  /** The walk up this process's ancestors (/proc) could not finish: too deep, or unreadable; refused, never taken for a person. */
  ancestry_unproven: { area: "policy", exit: 1, http: 422, governance: "evasion" },
  /** The day's cost budget (`max_cost_per_day`) is spent. */
  budget_cost: { area: "policy", exit: 1, http: 422, governance: "limit" },
  /** The hour's task budget (`max_tasks_per_hour`) is spent. */
  budget_tasks: { area: "policy", exit: 1, http: 422, governance: "limit" },
  /** The hour's tool-call budget (`max_actions_per_hour`) of the delegation tree is spent: its task is stopped, new tasks in it refused. */
  budget_actions: { area: "policy", exit: 1, http: 422, governance: "limit" },
  /** A budget ledger cannot be read or parsed: nothing that draws on it starts until it is repaired. */
  budget_ledger_unreadable: { area: "policy", exit: 1, http: 409 },
  /** A task's agent tried to change caesar's configuration, the rules it runs under. */
  configuration_in_task: { area: "policy", exit: 1, http: 422, governance: "evasion" },
  /** A sandboxed agent asked caesar's egress proxy for a host its task may not reach (`[sandbox] allow_hosts`). */
  egress_refused: { area: "policy", exit: null, http: null, governance: "limit" },
  /** The machine's proxy (HTTPS_PROXY), which caesar's egress proxy goes through, did not open a host the task may reach. */
  egress_upstream_failed: { area: "policy", exit: null, http: null, governance: "limit" },
  /** The target agent is not reachable from the caller (disabled, or not among its delegates). */
  delegate_unreachable: { area: "policy", exit: 1, http: 422, governance: "limit" },
  /** An independent delegate whose risk profile lists `always_ask` tools: nobody could approve them. */
  delegate_always_ask: { area: "policy", exit: 1, http: 422, governance: "limit" },
  /** The delegation would go deeper than `[policy] max_depth`. */
  delegation_depth: { area: "policy", exit: 1, http: 422, governance: "limit" },
  /** A bounded child would exceed its parent on some axis (mode, network, isolation, timeout…). */
  delegation_escalation: { area: "policy", exit: 1, http: 422, governance: "limit" },
  /** The caller's risk profile forbids delegation. */
  delegation_forbidden: { area: "policy", exit: 1, http: 422, governance: "limit" },
  /** A write task in place, in a git repository, is refused by `[policy] allow_inplace_write`. */
  inplace_write_refused: { area: "policy", exit: 1, http: 422, governance: "limit" },
  /** A request from inside a task without that task's valid credentials, or after it ended. */
  nested_unproven: { area: "policy", exit: 1, http: 422, governance: "evasion" },
  /** A request that comes from inside a task but carries no task credentials. */
  nested_without_credentials: { area: "policy", exit: 1, http: 422, governance: "evasion" },
  /** A task acted on a task outside its subtree (the tasks it started). */
  outside_subtree: { area: "policy", exit: 1, http: 422, governance: "evasion" },
  /** Someone other than caesar rewrote caesar's records in a task's directory; caesar put its own back. */
  records_rewritten: { area: "policy", exit: null, http: null, governance: "evasion" },
  /** An agent may not spawn itself under itself (`[policy] allow_recursion`). */
  recursion_refused: { area: "policy", exit: 1, http: 422, governance: "limit" },
  /** caesar refused a request of the task's agent with an error that has no code of its own. */
  refused: { area: "policy", exit: null, http: null },
  /** A spawned task may not spawn sub-tasks of its own (depth-1 cap). */
  spawn_depth_cap: { area: "policy", exit: 1, http: 422, governance: "limit" },
  /** A file in a task's directory was a link, FIFO, directory, hard link or oversized: caesar moved it aside unopened. */
  unsafe_task_file: { area: "policy", exit: 1, http: 409, governance: "evasion" },

  // ── Checks ─────────────────────────────────────────────────────────────────────────────────────────
  /** `--attempts` above 1 without any check: a second attempt is given only when checks fail. */
  attempts_without_checks: { area: "checks", exit: 2, http: 422 },
  /** An empty check: a check is a command. */
  check_empty: { area: "checks", exit: 2, http: 422 },
  /** A check's program does not exist (on PATH, or at the path given). */
  check_not_a_command: { area: "checks", exit: 2, http: 422 },
  /** A read-only task's bounded child asked for checks, which run outside any sandbox. */
  checks_from_read_only: { area: "checks", exit: 1, http: 422 },
  /** Checks need worktree isolation in a git repository with a commit. */
  checks_need_worktree: { area: "checks", exit: 2, http: 422 },
  /** The attempts asked for (or `[checks] attempts`) are not a whole number from 1 to 10. */
  invalid_attempts: { area: "checks", exit: 2, http: 422 },

  // ── Diffs and applying ─────────────────────────────────────────────────────────────────────────────
  /** The task was applied already: `--force` applies it again. */
  already_applied: { area: "results", exit: 1, http: 422 },
  /** The task's change conflicts with your HEAD; the conflicting files are named. */
  apply_conflict: { area: "results", exit: 1, http: 422 },
  /** The task ran in place: its changes are already in your working tree. */
  apply_inplace: { area: "results", exit: 1, http: 422 },
  /** The work tree the task branched from (its parent's worktree) is gone, or its plan cannot be read. */
  apply_target_gone: { area: "results", exit: 1, http: 422 },
  /** Applying would overwrite uncommitted changes of yours; the files are named. */
  apply_would_overwrite: { area: "results", exit: 1, http: 422 },
  /** The task has no git starting point, so its changes cannot be verified. */
  no_git_result: { area: "results", exit: 1, http: 422 },
  /** The task changed nothing. */
  nothing_to_apply: { area: "results", exit: 1, http: 422 },
  /** A remote task's result commit cannot be fetched from the cluster's git remote. */
  result_fetch_failed: { area: "results", exit: 1, http: 422 },
  /** The task's worktree is gone and no result commit was recorded (or its worker could not push one). */
  result_gone: { area: "results", exit: 1, http: 422 },
  /** The result ref on the git remote no longer names the task's result commit. */
  result_ref_mismatch: { area: "results", exit: 1, http: 422 },

  // ── How a task ended ───────────────────────────────────────────────────────────────────────────────
  /** The agent's stream reported an error that is none of the more specific ones. */
  agent_error: { area: "endings", exit: 1, http: null },
  /** The agent exited with a failure, without saying why in its stream. */
  agent_failed: { area: "endings", exit: 1, http: null },
  /** The agent was killed by a signal caesar did not send. */
  agent_killed: { area: "endings", exit: 1, http: null },
  /** The agent's program was not found: is it installed and on PATH? */
  agent_not_found: { area: "endings", exit: 1, http: null },
  /** The model provider refused the agent's credentials (401, 403). */
  auth_failed: { area: "endings", exit: 1, http: null },
  /** The task was cancelled (`caesar cancel`, an editor, the API, a race won by another). */
  cancelled: { area: "endings", exit: 1, http: null },
  /** The task's conductor died before it could finish the task; a later caesar finished it. */
  conductor_died: { area: "endings", exit: 1, http: null },
  /** The task's conductor failed on an error that has no code of its own (a bug: please report it). */
  conductor_error: { area: "endings", exit: 1, http: null },
  /** The model provider failed (a 5xx, overloaded). */
  model_error: { area: "endings", exit: 1, http: null },
  /** The model provider could not be reached. */
  model_unreachable: { area: "endings", exit: 1, http: null },
  /** One of a batch of tasks that could not be started (`start_failed`); it spent nothing. */
  not_started: { area: "endings", exit: 1, http: null },
  /** The model provider is rate limiting, or a quota is spent (429). */
  rate_limited: { area: "endings", exit: 1, http: null },
  /** A `[worktree] setup` command failed; the agent did not run. */
  setup_failed: { area: "endings", exit: 1, http: null },
  /** The agent's process could not be started. */
  spawn_failed: { area: "endings", exit: 1, http: null },
  /** The task was stopped at its deadline (`--timeout`). */
  timed_out: { area: "endings", exit: 1, http: null },

  // ── Notices ────────────────────────────────────────────────────────────────────────────────────────
  /** An MCP server the agent was configured with failed to start. */
  mcp_failed: { area: "events", exit: null, http: null },
  /** A warning of the agent's CLI. */
  warning: { area: "events", exit: null, http: null },

  // ── Chat ───────────────────────────────────────────────────────────────────────────────────────────
  /** `--body-file` cannot be read. */
  body_file_unreadable: { area: "chat", exit: 1, http: 422 },
  /** The channel exists already: `chat init` never overwrites one. */
  channel_exists: { area: "chat", exit: 1, http: 422 },
  /** No channel of that name under the chat root. */
  channel_not_found: { area: "chat", exit: 1, http: 404 },
  /** A file system error under the chat root (permissions, a full disk). */
  file_system_error: { area: "chat", exit: 1, http: 422 },
  /** The chat tools of this server act as one agent: another name was given. */
  identity_mismatch: { area: "chat", exit: 1, http: 422 },
  /** A chat tool needs the caller's agent name. */
  identity_missing: { area: "chat", exit: 1, http: 422 },
  /** Not a valid channel or agent name. */
  invalid_name: { area: "chat", exit: 2, http: 422 },
  /** Not a valid task marker (`task-<id>.md`). */
  invalid_task: { area: "chat", exit: 2, http: 422 },
  /** No message with that number in the channel, or it cannot be read. */
  message_not_found: { area: "chat", exit: 1, http: 404 },
  /** A chat message is at most 1 MiB. */
  message_too_large: { area: "chat", exit: 1, http: 422 },
  /** A channel's `_meta.json` is not valid channel metadata. */
  meta_invalid: { area: "chat", exit: 1, http: 422 },
  /** The change was made, but its folder could not be flushed to disk. */
  not_flushed: { area: "chat", exit: 1, http: 422 },
  /** Only the channel's maintainer may approve or veto, and only in a governed channel. */
  not_maintainer: { area: "chat", exit: 1, http: 422 },
  /** The post kept losing the channel's sequence lock to other posters. */
  post_failed: { area: "chat", exit: 1, http: 422 },
  /** The message was posted, but its folder could not be flushed to disk. */
  post_not_flushed: { area: "chat", exit: 1, http: 422 },
  /** The task marker is claimed already. */
  task_claimed: { area: "chat", exit: 1, http: 422 },
  /** The task marker is open already. */
  task_exists: { area: "chat", exit: 1, http: 422 },

  // ── MCP ────────────────────────────────────────────────────────────────────────────────────────────
  /** A report given both as fields and as `report`; nothing was recorded. */
  ambiguous_report: { area: "mcp", exit: 1, http: 422 },
  /** The return channel's task directory is not a caesar task directory. */
  channel_task_dir_invalid: { area: "mcp", exit: 2, http: 422 },
  /** The return channel was started without a task directory. */
  channel_task_dir_missing: { area: "mcp", exit: 2, http: 422 },
  /** The MCP client's own command to register the server failed. */
  client_command_failed: { area: "mcp", exit: 1, http: 422 },
  /** The MCP client's configuration cannot be edited safely; nothing was written. */
  client_config_edit_failed: { area: "mcp", exit: 1, http: 422 },
  /** The MCP client's configuration cannot be read. */
  client_config_unreadable: { area: "mcp", exit: 1, http: 422 },
  /** The MCP client's program is not on PATH. */
  client_not_installed: { area: "mcp", exit: 1, http: 422 },
  /** The MCP client did not record the server it was asked to add. */
  install_unverified: { area: "mcp", exit: 1, http: 422 },
  /** The report submitted is not a valid report; nothing was recorded. */
  invalid_report: { area: "mcp", exit: 1, http: 422 },
  /** Not a valid MCP server name. */
  invalid_server_name: { area: "mcp", exit: 2, http: 422 },
  /** The MCP client has a server of that name which starts something else; it was left as it is. */
  mcp_server_exists: { area: "mcp", exit: 1, http: 422 },
  /** `caesar mcp install` does not know that MCP client. */
  unknown_client: { area: "mcp", exit: 2, http: 422 },
  /** The report names another task than the one this return channel serves; nothing was recorded. */
  wrong_task: { area: "mcp", exit: 1, http: 422 },

  // ── HTTP API and its clients ───────────────────────────────────────────────────────────────────────
  /** A request that needs the bearer token or a dashboard session carries neither. */
  authentication_required: { area: "http", exit: 1, http: 401 },
  /** A request the HTTP layer refused before caesar read it. */
  bad_request: { area: "http", exit: 1, http: 400 },
  /** Only the holder of the bearer token may mint login links. */
  bearer_required: { area: "http", exit: 1, http: 403 },
  /** The request body is over 256 KiB. */
  body_too_large: { area: "http", exit: 1, http: 413 },
  /** No change with that number in this workspace. */
  change_not_found: { area: "http", exit: 1, http: 404 },
  /** The server answered 409 (a stale revision or run, a replayed request): `caesar query` never retries. */
  conflict: { area: "http", exit: 1, http: 409 },
  /** A cross-origin or form-type request may not mutate the workspace. */
  cross_origin: { area: "http", exit: 1, http: 403 },
  /** A mutation by dashboard session lacks the session's CSRF secret. */
  csrf_required: { area: "http", exit: 1, http: 403 },
  /** A `requestId` seen before: the request is not run twice. */
  duplicate_request: { area: "http", exit: 1, http: 409 },
  /** A request the HTTP layer refused as forbidden. */
  forbidden: { area: "http", exit: 1, http: 403 },
  /** A `Host` that is not an address the server is served at (DNS rebinding). */
  host_not_allowed: { area: "http", exit: 1, http: 403 },
  /** A bug in caesar: the server log (or `CAESAR_DEBUG=1`) has the details; please report it. */
  internal_error: { area: "http", exit: 1, http: 500 },
  /** The `Authorization` header is not `Bearer <token>`. */
  invalid_authorization: { area: "http", exit: 1, http: 400 },
  /** A request envelope that is not valid; every problem is listed in `issues`. */
  invalid_envelope: { area: "http", exit: 1, http: 400 },
  /** The request body is not JSON (or not UTF-8, or not whole). */
  invalid_json: { area: "http", exit: 1, http: 400 },
  /** A request to `POST /api/prove` without a nonce of 64 hex digits. */
  invalid_nonce: { area: "http", exit: 1, http: 400 },
  /** The server's answer is not one caesar understands (not JSON, or an error without a known code). */
  invalid_response: { area: "http", exit: 1, http: 422 },
  /** The bearer token is not the server's. */
  invalid_token: { area: "http", exit: 1, http: 401 },
  /** `CAESAR_URL` or `--server` is not a URL. */
  invalid_url: { area: "http", exit: 2, http: 422 },
  /** The server cannot listen on that address. */
  listen_failed: { area: "http", exit: 1, http: 422 },
  /** A login link used already, or from another run of the server. */
  login_code_invalid: { area: "http", exit: 1, http: 403 },
  /** No caesar server of this workspace has that pid. */
  no_such_server: { area: "http", exit: 2, http: 422 },
  /** No server token in this workspace: start `caesar serve` first. */
  no_token: { area: "http", exit: 1, http: 422 },
  /** caesar only talks to a local caesar server (loopback, an origin without a path). */
  non_local_endpoint: { area: "http", exit: 2, http: 422 },
  /** No such endpoint. */
  not_found: { area: "http", exit: 1, http: 404 },
  /** A POST without the operator header (an origin safeguard, not authentication). */
  operator_header_required: { area: "http", exit: 1, http: 403 },
  /** A mutation by dashboard session without this server's own `Origin`. */
  origin_required: { area: "http", exit: 1, http: 403 },
  /** The port is in use already. */
  port_in_use: { area: "http", exit: 1, http: 422 },
  /** The server answered with a redirect, which `caesar query` does not follow. */
  redirect_refused: { area: "http", exit: 1, http: 422 },
  /** No repository with that id in this workspace. */
  repository_not_found: { area: "http", exit: 1, http: 404 },
  /** No caesar server answers at that address. */
  server_unreachable: { area: "http", exit: 1, http: 422 },
  /** A dashboard session of another run of the server, or one that ended. */
  session_unknown: { area: "http", exit: 1, http: 401 },
  /** Several caesar servers serve this workspace (or none was chosen): pass `--server`. */
  several_servers: { area: "http", exit: 2, http: 422 },
  /** A server did not prove it holds this workspace's key (or none of this workspace runs): the key was not sent. */
  server_unproven: { area: "http", exit: 1, http: 422 },
  /** The request's `revision` is not current, or what it acts on changed after it. */
  stale_revision: { area: "http", exit: 1, http: 409 },
  /** The request's `runId` is not the server's current run. */
  stale_run: { area: "http", exit: 1, http: 409 },
  /** `--token` was given the token itself, which every account sees on the command line: use `@file` or `env:NAME`. */
  token_on_command_line: { area: "http", exit: 2, http: 422 },
  /** A server on a non-loopback address needs `--token`, and so does a login to a server started with one. */
  token_required: { area: "http", exit: 2, http: 422 },
  /** An unknown operation in a request envelope. */
  unknown_operation: { area: "http", exit: 1, http: 400 },
  /** The server's private directory is not private (a link, another owner, open to others). */
  unsafe_private_dir: { area: "http", exit: 1, http: 422 },
  /** The server's token file is not private (a link, another owner, open to others). */
  unsafe_private_file: { area: "http", exit: 1, http: 422 },
  /** A request body that is not `application/json`. */
  unsupported_media_type: { area: "http", exit: 1, http: 415 },
  /** A `--token` shorter than the minimum. */
  weak_token: { area: "http", exit: 2, http: 422 },

  // ── Cluster ────────────────────────────────────────────────────────────────────────────────────────
  /** The cluster did not confirm a cancel in time: the task's worker may still run it. */
  cancel_unconfirmed: { area: "cluster", exit: 1, http: null },
  /** Cancelled before the task reached the cluster's queue; no worker ran it. */
  cancelled_before_queue: { area: "cluster", exit: 1, http: null },
  /** Cancelled before its worker started it; the agent never ran. */
  cancelled_before_start: { area: "cluster", exit: 1, http: null },
  /** Cancelled while waiting in the cluster's queue; no worker ran it. */
  cancelled_in_queue: { area: "cluster", exit: 1, http: null },
  /** A cluster record kept changing under too many concurrent writers. */
  cas_contention: { area: "cluster", exit: 1, http: 422 },
  /** A bounded child of a task that runs on a cluster runs there too: drop `--on local`. */
  cluster_child_local: { area: "cluster", exit: 2, http: 422 },
  /** The tasks of one fan-out or race would go to different places. */
  cluster_mixed: { area: "cluster", exit: 2, http: 422 },
  /** caesar's streams and buckets cannot be created on the NATS server. */
  cluster_setup_failed: { area: "cluster", exit: 1, http: 422 },
  /** Not a NATS server URL (`nats://host:4222`, `tls://host:4222`). */
  invalid_nats_url: { area: "cluster", exit: 2, http: 422 },
  /** The NATS server has no JetStream for caesar's account. */
  jetstream_unavailable: { area: "cluster", exit: 1, http: 422 },
  /** The NATS server refused caesar's credentials. */
  nats_auth_refused: { area: "cluster", exit: 1, http: 422 },
  /** A NATS URL that carries credentials: put them in a file named in `[cluster]`. */
  nats_credentials_in_url: { area: "cluster", exit: 2, http: 422 },
  /** A NATS credentials or nkey file holds no usable credentials. */
  nats_credentials_invalid: { area: "cluster", exit: 1, http: 422 },
  /** A NATS credentials file cannot be read. */
  nats_credentials_unreadable: { area: "cluster", exit: 1, http: 422 },
  /** The NATS server cannot be reached. */
  nats_unreachable: { area: "cluster", exit: 1, http: 422 },
  /** The command needs a NATS server: `--on` or `[cluster] nats`. */
  no_cluster: { area: "cluster", exit: 2, http: 422 },
  /** The task is not a remote task. */
  not_remote: { area: "cluster", exit: 1, http: 422 },
  /** The result could not be pinned or unpinned on the cluster's git remote (`refs/caesar/keep/<id>`). */
  pin_failed: { area: "cluster", exit: 1, http: 422 },
  /** The cluster's queue cannot be named from the repository: set `[cluster] queue`. */
  queue_unknown: { area: "cluster", exit: 2, http: 422 },
  /** A worker refused the task by its own policy (an agent it does not serve, a depth or path it denies). */
  refused_by_worker: { area: "cluster", exit: 1, http: null },
  /** The task failed on its worker, which said no more. */
  remote_failed: { area: "cluster", exit: 1, http: null },
  /** A ref on the cluster's git remote cannot be read. */
  remote_unreachable: { area: "cluster", exit: 1, http: 422 },
  /** The worker could not push the task's result to the cluster's git remote. */
  result_push_failed: { area: "cluster", exit: 1, http: 422 },
  /** The worker cannot fetch the task's starting point: it and the submitter do not share the remote. */
  start_fetch_failed: { area: "cluster", exit: 1, http: 422 },
  /** The task's starting point cannot be pushed to the cluster's git remote. */
  start_push_failed: { area: "cluster", exit: 1, http: 422 },
  /** The starting point on the git remote was moved after the task was sent. */
  start_ref_mismatch: { area: "cluster", exit: 1, http: 422 },
  /** A worker refused a task carrying a `[worktree] setup` command or a check its own configuration does not list. */
  untrusted_command: { area: "cluster", exit: 1, http: null },
  /** The worker cannot serve every agent asked for with `--agents`. */
  worker_agents: { area: "cluster", exit: 2, http: 422 },
  /** The task's worker stopped answering, and the task was not run again. */
  worker_lost: { area: "cluster", exit: 1, http: null },
  /** A worker runs in a clone of the shared repository. */
  worker_needs_clone: { area: "cluster", exit: 2, http: 422 },
  /** A worker's clone has no commit. */
  worker_needs_commit: { area: "cluster", exit: 2, http: 422 },
  /** No agent is installed and allowed on the worker: it would serve nothing. */
  worker_no_agent: { area: "cluster", exit: 1, http: 422 },
  /** The worker could not prepare the task (its worktree, its records). */
  worker_prepare_failed: { area: "cluster", exit: 1, http: null },
  /** A worker failed its start-up check (its git remote cannot be fetched from or pushed to, its disk is full): it takes no task. */
  worker_unhealthy: { area: "cluster", exit: 1, http: 422 },
  /** As many workers as the task's `max_attempts` could not prepare it for faults of their own, and handed it back. */
  workers_could_not_prepare: { area: "cluster", exit: 1, http: null },

  // ── Git, files and documents ───────────────────────────────────────────────────────────────────────
  /** No space left (or the quota reached) on the device caesar writes to: free some and run the command again. */
  disk_full: { area: "system", exit: 1, http: 507 },
  /** A file cannot be read. */
  file_unreadable: { area: "system", exit: 1, http: 422 },
  /** A git command failed; its output is in the detail. */
  git_failed: { area: "system", exit: 1, http: 422 },
  /** git is not installed or not on PATH. */
  git_missing: { area: "system", exit: 1, http: 422 },
  /** A document (a task, a report…) does not match its schema; every problem is listed. */
  invalid_document: { area: "system", exit: 1, http: 422 },
  /** A lock (a file lock, a channel's sequence lock) stayed held by a live process past the time out. */
  lock_timeout: { area: "system", exit: 1, http: 422 },
  /** A document or request declares a protocol this caesar does not read (`caesar.report/v2`). */
  unsupported_protocol: { area: "system", exit: 1, http: 400 },
  /** A task's worktree is not one its project's git knows of (removed or pruned). */
  worktree_unregistered: { area: "system", exit: 1, http: 422 },

  // ── Mock model ─────────────────────────────────────────────────────────────────────────────────────
  /** `--port` is not a port number. */
  invalid_port: { area: "mock_model", exit: 2, http: 422 },
  /** A scenario that is not JSON or YAML, or not a valid scenario. */
  invalid_scenario: { area: "mock_model", exit: 2, http: 422 },
  /** `--print-env` needs the server's fixed `--port`. */
  port_required: { area: "mock_model", exit: 2, http: 422 },
  /** No built-in scenario or file of that name. */
  scenario_not_found: { area: "mock_model", exit: 2, http: 404 },
  /** `caesar mock-model` cannot point that agent at itself. */
  unknown_mock_agent: { area: "mock_model", exit: 2, http: 422 },

  // ── Conformance kit ────────────────────────────────────────────────────────────────────────────────
  /** `caesar conformance` needs one agent: an id from the configuration, or `--bin <program>`. */
  conformance_subject: { area: "conformance", exit: 2, http: 422 },
  /** The kit cannot drive that agent: an ACP agent, or a CLI `caesar mock-model` cannot point at itself. */
  conformance_unsupported: { area: "conformance", exit: 2, http: 422 },
  /** The agent to check is not installed: a CLI not on PATH, or a `--bin` that is no executable program. */
  conformance_agent_missing: { area: "conformance", exit: 2, http: 422 },
  /** `--level` is neither `core` nor `extended`. */
  invalid_level: { area: "conformance", exit: 2, http: 422 },
  /** Ctrl-C stopped the kit: the task running was cancelled, and no scorecard was made. */
  conformance_interrupted: { area: "conformance", exit: 1, http: 422 },
} as const satisfies Record<string, ErrorEntry>;

/** Every error code caesar gives a user. */
export type ErrorCode = keyof typeof ERRORS;

/** The codes an error can be thrown with: those the HTTP API has a status for. */
export type ThrownCode = {
  [C in ErrorCode]: (typeof ERRORS)[C]["http"] extends HttpStatus ? C : never;
}[ErrorCode];

/** The codes of usage and configuration problems (exit status 2): the codes of a `UsageError`. */
export type UsageCode = { [C in ErrorCode]: (typeof ERRORS)[C]["exit"] extends 2 ? C : never }[ErrorCode];

export function isErrorCode(value: unknown): value is ErrorCode {
  return typeof value === "string" && Object.hasOwn(ERRORS, value);
}

/** A code an error can be thrown with (a code relayed from another process, checked before it is used). */
export function isThrownCode(value: unknown): value is ThrownCode {
  return isErrorCode(value) && ERRORS[value].http !== null;
}

export function errorEntry(code: ErrorCode): ErrorEntry {
  return ERRORS[code];
}
