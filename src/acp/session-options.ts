import type { SessionConfigOption, SessionModeState } from "@agentclientprotocol/sdk";
import { listAdapters } from "../agents/registry.js";
import type { EffectiveConfig } from "../config/effective.js";
import { assertAdmitted } from "../policy/admission.js";
import { type Mode, ModeSchema } from "../protocol/choices.js";

/** Who a prompt is delegated to: the flag's choice, the session's option, or the project's default. */
export type Delegate = { agent: string } | { role: string } | { default: true };

/** The session's `mode`: the task's mode, or the role's / project's when `default`. */
export type SessionMode = "default" | Mode;

export const DELEGATE_OPTION = "delegate";
export const MODE_OPTION = "mode";
export const MODEL_OPTION = "model";
export const DEFAULT_VALUE = "default";

/** How the editor shows each mode of the protocol's (a mode added there must be named here: a type error). */
const MODE_NAMES: Record<Mode, { name: string; description: string }> = {
  write: {
    name: "Write",
    description: "The agent changes files in a worktree of its own; you apply the change",
  },
  "read-only": {
    name: "Read-only",
    description: "The agent investigates and reports; caesar refuses every edit",
  },
};

const MODES: { id: SessionMode; name: string; description: string }[] = [
  { id: "default", name: "Project default", description: "The mode the role or the project's policy sets" },
  ...ModeSchema.options.map((id) => ({ id, ...MODE_NAMES[id] })),
];

/** `agent:<id>` / `role:<name>` / `default`, as the delegate option's values. */
export function delegateValue(delegate: Delegate): string {
  if ("agent" in delegate) return `agent:${delegate.agent}`;
  if ("role" in delegate) return `role:${delegate.role}`;
  return DEFAULT_VALUE;
}

export function parseDelegateValue(value: string): Delegate | undefined {
  if (value === DEFAULT_VALUE) return { default: true };
  if (value.startsWith("agent:") && value.length > 6) return { agent: value.slice(6) };
  if (value.startsWith("role:") && value.length > 5) return { role: value.slice(5) };
  return undefined;
}

/**
 * The session's options: whom to delegate to (roles first, then the agents the policy admits), and the
 * task's mode. With `--agent` or `--role` on the command line the delegate is fixed and not offered.
 */
export function sessionOptions(
  config: EffectiveConfig,
  root: string,
  current: { delegate: Delegate; mode: SessionMode; model: string; fixed: boolean },
): { configOptions: SessionConfigOption[]; modes: SessionModeState } {
  const options: SessionConfigOption[] = [];
  if (!current.fixed) {
    const roles = Object.values(config.roles).map((role) => ({
      value: `role:${role.name}`,
      name: `Role ${role.name}`,
      ...(role.purpose.value ? { description: role.purpose.value } : {}),
    }));
    const agents = listAdapters(config, root)
      .filter((adapter) => admitted(config, adapter))
      .map((adapter) => ({ value: `agent:${adapter.id}`, name: adapter.displayName }));
    options.push({
      id: DELEGATE_OPTION,
      name: "Delegate to",
      description: "The agent (or role) that works on each prompt, in a task of its own",
      category: "_caesar_delegate",
      type: "select",
      currentValue: delegateValue(current.delegate),
      options: [{ value: DEFAULT_VALUE, name: "Project default" }, ...roles, ...agents],
    });
  }
  options.push({
    id: MODE_OPTION,
    name: "Mode",
    category: "mode",
    type: "select",
    currentValue: current.mode,
    options: MODES.map(({ id, name, description }) => ({ value: id, name, description })),
  });
  options.push({
    id: MODEL_OPTION,
    name: "Model",
    description: "The delegate's model, where it lets caesar choose",
    category: "model",
    type: "select",
    currentValue: current.model,
    options: modelValues(config).map((value) => ({
      value,
      name: value === DEFAULT_VALUE ? "Agent default" : value,
      ...(value === DEFAULT_VALUE ? { description: "The role's, [models]' or the agent's own choice" } : {}),
    })),
  });
  return {
    configOptions: options,
    modes: {
      currentModeId: current.mode,
      availableModes: MODES.map(({ id, name, description }) => ({ id, name, description })),
    },
  };
}

export function isSessionMode(value: string): value is SessionMode {
  return MODES.some((mode) => mode.id === value);
}

function admitted(config: EffectiveConfig, adapter: Parameters<typeof assertAdmitted>[1]): boolean {
  try {
    assertAdmitted(config, adapter);
    return true;
  } catch {
    return false;
  }
}

/**
 * The models the session offers: the agent's own choice, and those the configuration names (`[models]`,
 * roles' `model`) — caesar cannot list what each agent's provider serves, so it offers what the project
 * already uses.
 */
export function modelValues(config: EffectiveConfig): string[] {
  const named = [
    ...Object.values(config.models).map((model) => model.value),
    ...Object.values(config.roles).flatMap((role) => (role.model?.value ? [role.model.value] : [])),
  ];
  return [DEFAULT_VALUE, ...new Set(named.filter((model) => model && model !== DEFAULT_VALUE))];
}
