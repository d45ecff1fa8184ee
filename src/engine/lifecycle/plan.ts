import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { isAbsolute, join, relative } from "node:path";
import type { AgentAdapter, AgentCapabilities, ToolLists } from "../../agents/adapter.js";
import { unmaskedKeysFinding } from "../../agents/key-masks.js";
import { findAdapter, listAdapters } from "../../agents/registry.js";
import {
  defaultGlobalConfigPath,
  type EffectiveConfig,
  layerPaths,
  loadConfig,
  riskProfileOf,
  settingsOf,
} from "../../config/effective.js";
import type { IsolationRequest, RoleConfig } from "../../config/schema.js";
import { assertAdmitted } from "../../policy/admission.js";
import { decideDelegation, FIRST_TASK_DEPTH } from "../../policy/delegation.js";
import { assertNoEscalation, type Envelope } from "../../policy/escalation.js";
import { resolveNetwork } from "../../policy/network.js";
import { findRole, pickRoleAgent } from "../../policy/roles.js";
import { resolveTools } from "../../policy/tools.js";
import type { Mode } from "../../protocol/choices.js";
import type { Finding } from "../../protocol/report.js";
import { decideSandbox, type SandboxDecision } from "../../sandbox/decide.js";
import { parseDuration } from "../../support/duration.js";
import { CaesarError, UsageError } from "../../support/errors.js";
import { describeRepository } from "../../workspace/git.js";
import { checkProjectRelativePath } from "../../workspace/materialise.js";
import type { TaskPlan } from "../store/task-plan.js";
import { type Caller, governed, identifyCaller } from "./caller.js";
import { resolveChecks } from "./check-plan.js";
import { collectorRule, egressHosts } from "./egress-plan.js";
import { type ParentTask, parentOf } from "./parent.js";
import { resolveRemote } from "./remote-plan.js";
import type { DelegationRequest } from "./request.js";
import { planTrace } from "./trace-plan.js";

export type { TaskPlan } from "../store/task-plan.js";

export interface PlanContext {
  root: string;
  config?: EffectiveConfig;
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  /** Who asks, when the front end established it already (a fan-out asks once for all its tasks). */
  caller?: Caller;
}

/**
 * Resolve a delegation request against the configuration into a plan — or refuse, before any task
 * directory or worktree exists, naming the setting that lifts the refusal. Who asks is established first
 * (a task proves itself with its credentials; see caller.ts): a nested request is governed by its
 * parent's records, never by anything its agent can write or set.
 */
export async function resolvePlan(
  request: DelegationRequest,
  context: PlanContext,
): Promise<{ plan: TaskPlan; adapter: AgentAdapter }> {
  const action = describeRequest(request);
  const caller =
    context.caller ?? (await identifyCaller(context.root, { env: context.env, cwd: context.cwd, action }));
  return governed(caller, action, () => planRequest(request, context, caller));
}

/**
 * The global configuration file a caller's requests are governed by: a nested request reads the one its
 * tree's root was planned with, never one its agent points to (XDG_CONFIG_HOME, HOME).
 */
export function globalConfigOf(root: string, caller: Caller, env?: NodeJS.ProcessEnv): string {
  return caller.kind === "task"
    ? (caller.plan.global_config ?? defaultGlobalConfigPath())
    : layerPaths(root, env).global;
}

/** The configuration that governs a caller's requests (see `globalConfigOf`). */
export async function loadCallerConfig(
  root: string,
  caller: Caller,
  env?: NodeJS.ProcessEnv,
): Promise<EffectiveConfig> {
  return loadConfig(root, env, { globalPath: globalConfigOf(root, caller, env) });
}

/** What a request asks, in the words of `caesar run`, for the records of a refusal. */
export function describeRequest(request: DelegationRequest): string {
  const target = request.agent ? `--agent ${request.agent}` : request.role ? `--role ${request.role}` : "";
  const mode = request.mode ? ` --mode ${request.mode}` : "";
  return `run ${target}${mode} ${JSON.stringify(request.objective.slice(0, 60))}`.replace(/\s+/g, " ");
}

/** The finding of a task that runs unsandboxed under `[sandbox] mode = "auto"`. */
export const UNSANDBOXED_TITLE = "The agent ran without an OS sandbox";

async function planRequest(
  request: DelegationRequest,
  context: PlanContext,
  caller: Caller,
): Promise<{ plan: TaskPlan; adapter: AgentAdapter }> {
  const { root } = context;
  // A person's request (no parent task, whose worktree would come first): git is asked about the project
  // at once, its process running while the configuration is read and checked.
  const early = caller.kind === "task" ? undefined : describeRepository(root);
  early?.catch(() => undefined); // awaited below, or not at all when the request is refused first
  const globalConfig = globalConfigOf(root, caller, context.env);
  const config = context.config ?? (await loadConfig(root, context.env, { globalPath: globalConfig }));
  // Never empty: the request's parse refuses an objective that says nothing.
  const objective = request.objective.trim();
  const role = request.role ? findRole(config, request.role) : undefined;
  const parent = caller.kind === "task" ? parentOf(caller, config) : undefined;
  const remote = resolveRemote(request.on, config, root, parent?.task.remote ?? null, context.env);
  // An agent sent to other machines need not be installed on this one.
  const adapter = await chooseAgent(config, root, request, role, remote === null);
  assertAdmitted(config, adapter);
  // A program of the user's that cannot be found is refused before anything exists (not at its start, after
  // its worktree was made).
  if (remote === null && adapter.kind === "custom" && !(await adapter.detect(context.env)).installed)
    throw new UsageError(
      "agent_program_missing",
      `Agent "${adapter.id}": its program cannot be found, or is not executable.`,
      {
        detail: `Its [[agent]] bin is looked for as written (a bare name beside the configuration file that declares it, else on PATH; a path with a slash, from the project root). Fix bin in the file that declares "${adapter.id}" (\`caesar policy show\` says which), install the program, or make it executable (chmod +x). Nothing was started.`,
      },
    );

  // Images with the brief: an agent that cannot take them would work without what the person showed it.
  if (request.images?.length && adapter.images?.value !== true)
    throw new UsageError("images_unsupported", `Agent "${adapter.id}" does not take images in its prompt.`, {
      detail: `${adapter.images?.why ?? "caesar cannot hand it an image with the brief"}. Send the prompt without the image, or choose an agent that takes them (the ACP agents: gemini-acp, opencode-acp…). Nothing was started.`,
    });

  const decision = parent ? decideDelegation(config, parent.caller, adapter) : undefined;
  const bounded = decision?.mode === "bounded";
  const inherited = bounded ? parent?.envelope : undefined;
  if (bounded && parent?.task.remote && remote === null) {
    throw new UsageError(
      "cluster_child_local",
      `Task ${parent.task.id} runs in a cluster: its bounded children share its budget there and run there too.`,
      { detail: "Drop --on local (or pass --on with the parent's NATS servers)." },
    );
  }

  const mode = request.mode ?? role?.mode ?? inherited?.mode ?? config.policy.mode.value;
  const repo = await repositoryFor(root, parent, early);
  const checks = resolveChecks(request, {
    config,
    role,
    workspace: repo.kind === "none" ? root : repo.workspace,
    env: context.env ?? process.env,
  });
  // A check is a command caesar runs itself, outside any agent's sandbox: a read-only task may not use one
  // to write through its child (the configuration's checks still apply: the person chose them).
  const asked = checks.checks.filter((check) => check.from === "request" || check.from === "acceptance");
  if (inherited?.mode === "read-only" && asked.length > 0) {
    throw new CaesarError(
      "checks_from_read_only",
      `A read-only task cannot ask for checks: ${asked.map((check) => `\`${check.command}\``).join(", ")}.`,
      {
        detail: `Checks run as commands outside the agent's sandbox, and task ${parent?.task?.id} is read-only. Delegate without checks (the project's [checks] still apply), or ask the person to run them.`,
      },
    );
  }
  const isolationRequest =
    request.isolation ??
    role?.isolation ??
    (inherited?.isolation === "worktree" ? "worktree" : config.policy.isolation.value);
  // The OS sandbox the agent runs in (a worker's own [sandbox] decides for a remote task).
  const sandbox: SandboxDecision = remote
    ? { backend: null, detail: "runs on a worker, whose own [sandbox] decides" }
    : decideSandbox(config.sandbox.mode.value, config.sandbox.mode.source);
  // A read-only task whose agent nothing keeps from writing (no OS sandbox, no read-only of its own) does
  // not run in the user's checkout under auto: a write would land there. It gets a worktree instead.
  const unguardedReadOnly =
    mode === "read-only" && adapter.capabilities.readOnly.value === "none" && sandbox.backend === null;
  const isolation = remote
    ? remoteIsolation(request.isolation ?? role?.isolation, repo.kind)
    : resolveIsolation(
        isolationRequest,
        mode,
        repo.kind,
        config,
        checks.checks.length > 0,
        unguardedReadOnly,
      );
  const networkRequest =
    request.network ??
    role?.network ??
    (inherited && !inherited.network ? "off" : config.policy.network.value);
  // Under the sandbox no agent has the host's network: it reaches what its task allows through caesar's
  // egress proxy (its model always; more when the task has the network). An agent caesar could not otherwise
  // confine (network "open": a custom program, the reference agent, claude, gemini, opencode and copilot)
  // is thereby one whose network caesar toggles; codex's own sandbox still cuts its commands' as it says.
  const sandboxCutsNetwork = sandbox.backend !== null;
  const capabilities: AgentCapabilities =
    sandboxCutsNetwork && adapter.capabilities.network.value === "open"
      ? {
          ...adapter.capabilities,
          network: {
            value: "toggle",
            why: "caesar's OS sandbox lets it reach only its model when the task has no network",
          },
        }
      : adapter.capabilities;
  const { network, findings } = resolveNetwork(adapter.id, networkRequest, mode, capabilities);
  const egress = sandboxCutsNetwork
    ? egressHosts(adapter, network, config, context.env ?? process.env)
    : null;
  // Masking was asked for (the default) and cannot be done for this agent's keys: said, not silent.
  const unmasked =
    sandbox.backend !== null && config.sandbox.mask_keys.value
      ? unmaskedKeysFinding(adapter.product, context.env ?? process.env)
      : undefined;
  if (unmasked) findings.push(unmasked);
  if (!remote && sandbox.backend === null && config.sandbox.mode.value === "auto")
    findings.push({
      severity: "high",
      title: UNSANDBOXED_TITLE,
      detail: `${sandbox.detail}. With [sandbox] mode = "auto" (${config.sandbox.mode.source}) it ran unsandboxed: nothing but caesar's own checks kept it from writing outside its workspace, reading your credentials or reaching the network. Set [sandbox] mode = "required" to refuse instead.`,
    });

  const settings = settingsOf(config, adapter.id);
  // The role's, else the agent's own (the reference's per-target timeout), else the project's.
  const agentTimeout = settings.timeout.value;
  const defaultTimeout = role?.timeout
    ? parseDuration(role.timeout, "timeout")
    : agentTimeout !== null
      ? parseDuration(agentTimeout, `[agents.${adapter.id}] timeout`)
      : parseDuration(config.policy.timeout.value, "timeout");
  // A bounded child's default deadline is clamped to its parent's remaining time; an explicit one is checked.
  const timeoutMs =
    request.timeout ??
    (inherited ? Math.max(1000, Math.min(defaultTimeout, inherited.timeMs)) : defaultTimeout);
  const stallMs = parseDuration(config.policy.stall_notice.value, "[policy] stall_notice");
  const model = request.model ?? role?.model ?? config.models[adapter.id]?.value ?? null;

  const ownProfile = riskProfileOf(config, settings.risk_profile.value);
  // The agent's tools: its own lists narrowed by its risk profile's, and for a bounded child its parent's
  // as the ceiling (intersected, as the delegation reference does, not refused).
  const { tools, emptied } = resolveTools(
    { allowed: settings.allowed_tools.value, excluded: settings.excluded_tools.value },
    { allowed: ownProfile.allowed_tools.value, excluded: ownProfile.excluded_tools.value },
    inherited?.tools,
  );
  if (emptied)
    findings.push({
      severity: "medium",
      title: "No tool left for the agent",
      detail: `The allowed_tools of "${adapter.id}", of its risk profile "${settings.risk_profile.value}"${inherited ? " and of its parent" : ""} have no tool in common: it runs without tools, as the delegation reference gives such a target a turn with none.`,
    });
  findings.push(...toolFindings(adapter, tools));
  if (ownProfile.always_ask.value.length > 0)
    findings.push({
      severity: "medium",
      title: "always_ask could not be enforced",
      detail: `Risk profile "${settings.risk_profile.value}" lists always_ask [${ownProfile.always_ask.value.join(", ")}], but caesar does not stop an agent before a tool call to ask a person: it only refuses such an agent as an independent delegate. The agent ran without asking.`,
    });
  const limits = {
    max_tasks_per_hour: ownProfile.max_tasks_per_hour.value,
    max_cost_per_day: ownProfile.max_cost_per_day.value,
    max_actions_per_hour: ownProfile.max_actions_per_hour.value,
  };
  if (parent && inherited) {
    const child: Envelope = {
      mode,
      network,
      isolation,
      timeMs: timeoutMs,
      maxTasksPerHour: limits.max_tasks_per_hour,
      maxCostPerDay: limits.max_cost_per_day,
      maxActionsPerHour: limits.max_actions_per_hour,
      tools,
    };
    assertNoEscalation(parent.task.id, child, inherited, {
      ...(networkRequest === "off" && network ? { network: cannotConfine(adapter, config, root) } : {}),
    });
  }

  const worktree = {
    copy: config.worktree.copy.value.map((path) => checkProjectRelativePath(path, "copy")),
    link: config.worktree.link.value.map((path) => checkProjectRelativePath(path, "link")),
    setup: config.worktree.setup.value,
  };
  const top = repo.kind === "none" ? null : repo.top;
  const traced = planTrace(
    config,
    context.env ?? process.env,
    caller.kind === "task" ? caller.plan : undefined,
  );
  findings.push(...traced.findings);
  const collector = traced.telemetry && collectorRule(traced.telemetry.traces_url);
  if (egress && collector && !egress.includes(collector)) egress.push(collector);
  return {
    adapter,
    plan: {
      root,
      objective,
      context: request.context ?? "",
      constraints: request.constraints ?? [],
      acceptance: request.acceptance_criteria ?? [],
      agent: adapter.id,
      role: role?.name ?? null,
      mode,
      isolation,
      network,
      sandbox: {
        backend: sandbox.backend,
        detail: sandbox.detail,
        cuts_network: sandboxCutsNetwork,
        egress,
        mask_keys: sandbox.backend !== null && config.sandbox.mask_keys.value,
      },
      findings,
      tools,
      timeout_ms: timeoutMs,
      stall_ms: stallMs,
      model,
      extra_args: request.extra_args ?? [],
      channel: request.channel ?? false,
      ask_permissions: request.ask_permissions ?? false,
      // The editor's servers: only to an agent that takes them, and never into a read-only task (their
      // tools could write).
      images: request.images ?? [],
      mcp_servers:
        mode === "write" && adapter.extraMcpServers?.value === true && remote === null
          ? (request.mcp_servers ?? [])
          : [],
      parent_id: parent?.task.id ?? null,
      // As the delegation reference numbers it: whoever asks without being a task (a person, the main
      // agent over MCP, CI) is depth 0, the task it starts is 1, and each nesting adds one.
      depth: parent ? parent.task.depth + 1 : FIRST_TASK_DEPTH,
      kind: decision?.kind ?? "root",
      bounded,
      budget:
        bounded && parent
          ? {
              tree: parent.task.budgetTree,
              max_tasks_per_hour: inherited!.maxTasksPerHour,
              max_cost_per_day: inherited!.maxCostPerDay,
              max_actions_per_hour: inherited!.maxActionsPerHour,
            }
          : { tree: null, ...limits },
      repo_top: top,
      repo_prefix: repo.kind === "none" ? "" : relative(repo.top, repo.workspace),
      worktree,
      system_prompt: role?.system_prompt_file ? await readRolePrompt(root, role, config) : null,
      requested_by: parent ? parent.task.id : (request.requested_by ?? "cli"),
      ...checks,
      race: null,
      global_config: globalConfig,
      // A task sent to other machines starts from the commit of now, pushed for them to fetch.
      base_commit: remote && repo.kind === "usable" ? repo.head : null,
      remote,
      trace: traced.trace,
      telemetry: traced.telemetry,
    },
  };
}

/** Say so when the agent's adapter cannot apply the tool restrictions asked of it. */
function toolFindings(adapter: AgentAdapter, tools: ToolLists): Finding[] {
  const control = adapter.capabilities.tools;
  const unenforced: string[] = [];
  if (tools.allowed !== null && control.value !== "allow-and-exclude")
    unenforced.push(`allowed_tools [${tools.allowed.join(", ")}]`);
  if (tools.excluded.length > 0 && control.value === "none")
    unenforced.push(`excluded_tools [${tools.excluded.join(", ")}]`);
  if (unenforced.length === 0) return [];
  return [
    {
      severity: "medium",
      title: "Tool restrictions could not be enforced",
      detail: `${unenforced.join(" and ")} were asked of "${adapter.id}", but ${control.why}. The agent ran without them.`,
    },
  ];
}

async function chooseAgent(
  config: EffectiveConfig,
  root: string,
  request: DelegationRequest,
  role: RoleConfig | undefined,
  installedHere: boolean,
): Promise<AgentAdapter> {
  if (request.agent) return findAdapter(config, root, request.agent);
  if (role) return pickRoleAgent(config, role, listAdapters(config, root), installedHere);
  throw new UsageError("no_agent", "No agent selected.", {
    detail:
      "Pass --agent <id> (try --agent reference, the bundled agent), or --role <name> (reviewer, implementer, investigator, or one of yours).",
  });
}

/**
 * The remedy when a bounded child asks for --network off from an agent caesar cannot confine: the flag was
 * already there, so say what would work instead.
 */
function cannotConfine(adapter: AgentAdapter, config: EffectiveConfig, root: string): string {
  const confinable = listAdapters(config, root)
    .filter((other) => ["toggle", "none", "write-only"].includes(other.capabilities.network.value))
    .map((other) => other.id);
  return `--network off was asked, but caesar cannot cut "${adapter.id}"'s network (${adapter.capabilities.network.why}), so it would run with the network its parent does not have. Delegate to an agent caesar can confine instead (${confinable.join(", ") || "none is configured"}; \`caesar agents list\` shows each one's network control), or do the work in the parent`;
}

/**
 * Where the task's git work tree is: for a child of a worktree task, the parent's worktree (the child
 * branches from the parent's HEAD, and applies back into it); otherwise the project's repository.
 */
async function repositoryFor(
  root: string,
  parent: ParentTask | undefined,
  early: ReturnType<typeof describeRepository> | undefined,
) {
  const parentTree = parent?.task.worktree;
  if (parentTree && existsSync(parentTree)) {
    const described = await describeRepository(parentTree);
    if (described.kind !== "none") return { ...described, workspace: parent!.task.workspace };
  }
  const described = await (early ?? describeRepository(root));
  return described.kind === "none" ? described : { ...described, workspace: root };
}

async function readRolePrompt(
  root: string,
  role: RoleConfig,
  config: EffectiveConfig,
): Promise<string | null> {
  const file = role.system_prompt_file!;
  const path = isAbsolute(file) ? file : join(root, file);
  const source = config.roles[role.name]?.system_prompt_file.source ?? "default";
  try {
    return await readFile(path, "utf8");
  } catch (error) {
    // The default roles' prompt files appear with `caesar init`; until then those roles run without one.
    if (source === "default") return null;
    throw new UsageError(
      "role_prompt_missing",
      `Role "${role.name}": cannot read system_prompt_file ${path}.`,
      {
        detail: `${(error as Error).message}. Fix the path in its [[role]] entry, or remove system_prompt_file.`,
      },
    );
  }
}

/** A task on other machines runs in a worktree there: its result comes back as a commit. */
function remoteIsolation(
  requested: IsolationRequest | undefined,
  repo: "none" | "empty" | "usable",
): "worktree" {
  if (requested === "inplace") {
    throw new UsageError("remote_inplace", "A task sent to other machines cannot run in place.", {
      detail:
        "It runs in a worktree on the worker, and its change comes back as a commit for `caesar apply`. Drop --isolation inplace, or run it here with --on local.",
    });
  }
  if (repo !== "usable") {
    throw new UsageError(
      "remote_needs_git",
      repo === "none"
        ? "A task sent to other machines needs a git repository: its code travels through git."
        : "A task sent to other machines needs a repository with at least one commit.",
      {
        detail:
          repo === "none"
            ? "Run caesar inside a clone of the repository the workers share, or run here with --on local."
            : "Make a first commit and push it, or run here with --on local.",
      },
    );
  }
  return "worktree";
}

function resolveIsolation(
  requested: IsolationRequest,
  mode: Mode,
  repo: "none" | "empty" | "usable",
  config: EffectiveConfig,
  checked: boolean,
  /** auto picks a worktree even for a read-only task (its agent is not kept from writing). */
  unguarded = false,
): "inplace" | "worktree" {
  // Checks run in the task's own worktree: never in the user's files.
  if (checked && (repo !== "usable" || requested === "inplace")) {
    throw new UsageError(
      "checks_need_worktree",
      repo === "usable"
        ? "Checks need worktree isolation: they run in the task's own worktree, never in your files."
        : "Checks need a git repository with at least one commit: they run in the task's own worktree.",
      {
        detail:
          repo === "usable"
            ? "Leave --isolation at auto (or pass worktree), or run the task without checks."
            : "Run caesar in a git repository with a commit (git init && git commit --allow-empty -m init), or run the task without checks.",
      },
    );
  }
  if (repo !== "usable") {
    if (requested === "worktree") {
      throw new UsageError(
        "worktree_unavailable",
        repo === "none"
          ? "Worktree isolation needs a git repository."
          : "Worktree isolation needs a repository with at least one commit.",
        {
          detail:
            repo === "none"
              ? "Run caesar inside a git repository (git init && git commit), or use --isolation inplace."
              : "Make a first commit (git commit --allow-empty -m init), or use --isolation inplace.",
        },
      );
    }
    return "inplace"; // outside git, or without commits, inplace is the only mode and is allowed
  }
  const isolation =
    requested === "auto" ? (mode === "write" || checked || unguarded ? "worktree" : "inplace") : requested;
  if (isolation === "inplace" && mode === "write" && !config.policy.allow_inplace_write.value) {
    throw new CaesarError(
      "inplace_write_refused",
      "A write task in place, in a git repository, is refused by policy.",
      {
        detail:
          "It would edit your working tree directly. Use --isolation worktree (the default for writes), or set [policy] allow_inplace_write = true.",
      },
    );
  }
  return isolation;
}
