import { resolve } from "node:path";
import type { EffectiveConfig } from "../config/effective.js";
import { resolveRemote } from "../engine/lifecycle/remote-plan.js";
import type { RemotePlan } from "../engine/store/task-plan.js";
import { UsageError } from "../support/errors.js";

/**
 * The cluster a worker or `caesar cluster status` talks to: `--on` as for `caesar run` (`--nats`, its
 * former spelling, still read; else `[cluster] nats`), with the
 * credentials `[cluster]` names, and `--creds` (a credentials file) over them.
 */
export function clusterAccessFrom(
  flags: { on?: string; nats?: string; creds?: string; remote?: string },
  config: EffectiveConfig,
  root: string,
  cwd: string,
  command: string,
): RemotePlan {
  const on = flags.on ?? flags.nats;
  if (on === "local") {
    throw new UsageError("invalid_option", `--on local: ${command} needs a NATS server.`, {
      detail: "Pass --on nats://host:4222.",
    });
  }
  const remote = resolveRemote(on, config, root, null);
  if (!remote) {
    throw new UsageError("no_cluster", `${command} needs a NATS server.`, {
      detail: "Pass --on nats://host:4222, or set [cluster] nats in the configuration (docs/cluster.md).",
    });
  }
  return {
    ...remote,
    ...(flags.creds ? { credentials: resolve(cwd, flags.creds) } : {}),
    ...(flags.remote ? { git_remote: flags.remote } : {}),
  };
}
