import { UsageError } from "../support/errors.js";

export const ARG_TOKENS = ["prompt", "workspace", "taskDir", "reportPath", "model"] as const;
export type ArgToken = (typeof ARG_TOKENS)[number];

const TOKEN = /\{\{\s*([A-Za-z]+)\s*\}\}/g;

/**
 * Substitute `{{prompt}}`, `{{workspace}}`, `{{taskDir}}`, `{{reportPath}}`, `{{model}}` in an argument
 * list. An argument holding a token with no value is removed whole (no `--model=` residue).
 */
export function substituteArgs(args: readonly string[], values: Partial<Record<ArgToken, string>>): string[] {
  const out: string[] = [];
  for (const arg of args) {
    let missing = false;
    const replaced = arg.replace(TOKEN, (_, name: string) => {
      const value = values[name as ArgToken];
      if (value === undefined || value === "") {
        missing = true;
        return "";
      }
      return value;
    });
    if (!missing) out.push(replaced);
  }
  return out;
}

/** Check an `[[agent]]` args list: known tokens only, and `{{prompt}}` present. */
export function validateArgTokens(
  agentId: string,
  args: readonly string[],
  cwdMode: "process" | "flag",
): void {
  const used = new Set<string>();
  for (const arg of args) for (const match of arg.matchAll(TOKEN)) used.add(match[1]!);
  for (const token of used) {
    if (!(ARG_TOKENS as readonly string[]).includes(token)) {
      throw new UsageError(
        "config_unknown_token",
        `Agent "${agentId}": unknown token {{${token}}} in args.`,
        {
          detail: `Tokens are ${ARG_TOKENS.map((t) => `{{${t}}}`).join(", ")}.`,
        },
      );
    }
  }
  if (!used.has("prompt")) {
    throw new UsageError("config_missing_prompt", `Agent "${agentId}": args has no {{prompt}}.`, {
      detail: `Without it the agent never receives the objective. Add "{{prompt}}" to args in its [[agent]] entry, e.g. args = ["{{prompt}}"].`,
    });
  }
  if (cwdMode === "flag" && !used.has("workspace")) {
    throw new UsageError(
      "config_missing_workspace",
      `Agent "${agentId}": cwd_mode = "flag" but args has no {{workspace}}.`,
      {
        detail:
          'With cwd_mode = "flag" a token must carry the workspace: add "{{workspace}}" to args, or use cwd_mode = "process".',
      },
    );
  }
}
