import { CaesarError, UsageError } from "../support/errors.js";

/** The errors of the chat layer, built in one place so their wording stays consistent. */

export function channelNotFoundError(channel: string, root: string): CaesarError {
  return new CaesarError("channel_not_found", `No channel "${channel}" in ${root}.`, {
    detail: `Create it with \`caesar chat init ${channel}\`, or point at another root with --root or AGENT_CHAT_ROOT (\`caesar chat channels\` lists what exists).`,
    data: { channel, root },
  });
}

export function channelExistsError(channel: string, root: string): CaesarError {
  return new CaesarError("channel_exists", `Channel "${channel}" already exists in ${root}.`, {
    detail: "Post to it, or pick another name: init never overwrites a channel.",
    data: { channel, root },
  });
}

export function metaInvalidError(path: string, problem: string): CaesarError {
  return new CaesarError("meta_invalid", `${path} is not valid channel metadata: ${problem}.`, {
    detail:
      "Fix the file by hand: it is JSON with `channel`, `members`, `topic`, `created` (and optionally `maintainer`, `approval_bands`, `veto_window_s`).",
  });
}

export function invalidArgumentError(summary: string, detail: string): UsageError {
  return new UsageError("invalid_argument", summary, { detail });
}
