import { dirname, resolve } from "node:path";
import { resolveCustomBin } from "../../agents/custom-bin.js";
import { REFERENCE_AGENT_SCRIPT } from "../../agents/reference.js";
import { findAdapter } from "../../agents/registry.js";
import { loadConfig } from "../../config/effective.js";
import type { CustomAgentConfig } from "../../config/schema.js";
import { mockSetupFor } from "../../mock-model/agent-env.js";
import { UsageError } from "../../support/errors.js";
import { findExecutable } from "../../support/executable-path.js";
import type { SubjectKind } from "./requirements.js";

/** The id a `--bin` program runs as in the kit's repositories. */
export const BIN_SUBJECT_ID = "conformance-subject";

/** The agent under test, as the kit's throwaway repositories declare and run it. */
export interface Subject {
  /** What the scorecard calls it: the agent id, or the program given with --bin. */
  name: string;
  kind: SubjectKind;
  /** The agent id its tasks run with. */
  agent: string;
  /** Its `[[agent]]` entry, with `bin` made absolute; absent for a built-in agent. */
  declaration?: CustomAgentConfig;
  /** The program and its first arguments, to run it behind the task.json probe (programs only). */
  program?: { bin: string; args: string[]; entry: Omit<CustomAgentConfig, "id" | "bin"> };
  /** Does its adapter give it the MCP return channel (ask_orchestrator)? */
  channel: boolean;
  /** An ACP agent, whose session caesar ends itself. */
  session: boolean;
}

/** `--bin <program>`: an OACP program run as `[[agent]]` with the default arguments (the brief). */
export async function subjectOfProgram(bin: string, cwd: string): Promise<Subject> {
  const path = bin.includes("/") ? resolve(cwd, bin) : bin;
  if (findExecutable(path, process.env, cwd) === undefined)
    throw new UsageError("conformance_agent_missing", `--bin ${bin}: no such executable program.`, {
      detail: bin.includes("/")
        ? `Nothing executable at ${path}: check the path, and chmod +x the file.`
        : `"${bin}" is not on PATH: give its path (./${bin}), or put it on PATH.`,
    });
  const declaration: CustomAgentConfig = {
    id: BIN_SUBJECT_ID,
    bin: path,
    protocol: "oacp",
    args: ["{{prompt}}"],
    cwd_mode: "process",
  };
  return {
    name: bin,
    kind: "program",
    agent: BIN_SUBJECT_ID,
    declaration,
    program: { bin: path, args: [], entry: withoutIdentity(declaration) },
    channel: false,
    session: false,
  };
}

/**
 * An agent of the project's configuration: the reference agent and `[[agent]]` programs are driven through
 * their files; a built-in CLI is pointed at `caesar mock-model`, whose scripts play a model that does
 * each scenario right — so the kit checks what the CLI and its adapter do with it.
 */
export async function subjectOfAgent(id: string, root: string): Promise<Subject> {
  const config = await loadConfig(root);
  const adapter = findAdapter(config, root, id);
  const declared = config.agents[id];
  if (declared) {
    if (declared.value.protocol === "acp")
      throw unsupported(id, "it speaks the Agent Client Protocol: caesar drives it, it reads no task.json.");
    const file = config.files.find((candidate) => candidate.layer === declared.source)?.path;
    const bin = resolveCustomBin(declared.value.bin, root, file ? dirname(file) : undefined);
    const declaration = { ...declared.value, bin };
    delete declaration.enabled;
    return {
      name: id,
      kind: "program",
      agent: id,
      declaration,
      program: { bin, args: [], entry: withoutIdentity(declaration) },
      channel: false,
      session: false,
    };
  }
  if (adapter.id === "reference") {
    return {
      name: id,
      kind: "program",
      agent: id,
      program: {
        bin: process.execPath,
        args: [REFERENCE_AGENT_SCRIPT],
        entry: { protocol: "oacp", args: ["{{prompt}}"], cwd_mode: "process" },
      },
      channel: false,
      session: false,
    };
  }
  try {
    mockSetupFor(id, "http://127.0.0.1:1", "/nonexistent");
  } catch {
    throw unsupported(id, "caesar mock-model cannot point it at itself, so the kit cannot script its model.");
  }
  // Without it every scenario would fail the same way: say so once, before anything is made.
  if (!(await adapter.detect(process.env)).installed)
    throw new UsageError("conformance_agent_missing", `${adapter.displayName} is not installed here.`, {
      detail: `Install it so that \`${id}\` runs from PATH (caesar doctor shows what caesar finds), then run the kit again.`,
    });
  return {
    name: id,
    kind: "cli",
    agent: id,
    channel: adapter.capabilities.mcp.value,
    session: adapter.protocol === "acp",
  };
}

function withoutIdentity(entry: CustomAgentConfig): Omit<CustomAgentConfig, "id" | "bin"> {
  const { id: _id, bin: _bin, ...rest } = entry;
  return rest;
}

function unsupported(id: string, why: string): UsageError {
  return new UsageError("conformance_unsupported", `caesar conformance cannot check "${id}": ${why}`, {
    detail:
      "The kit checks OACP programs ([[agent]] entries, --bin, the reference agent) and the built-in CLIs caesar mock-model can drive (codex, claude, opencode, gemini, copilot).",
  });
}
