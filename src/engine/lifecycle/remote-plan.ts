import { homedir } from "node:os";
import { dirname, isAbsolute, join, resolve } from "node:path";
import { type EffectiveConfig, layerPaths, type Sourced } from "../../config/effective.js";
import { parseDuration } from "../../support/duration.js";
import { isErrorCode } from "../../support/error-catalogue.js";
import { UsageError } from "../../support/errors.js";
import { DEFAULT_RETRY, type RemotePlan } from "../store/task-plan.js";

/** `--on local`: run here even when `[cluster] nats` is set. */
export const ON_LOCAL = "local";

/**
 * Where a task runs: on this machine (null), or on the pool of workers behind a NATS server — from
 * `--on` (a URL, several separated by commas, or `local`), else the parent's cluster (a task delegated
 * from a remote task stays in the cluster: its budget lives there), else `[cluster] nats`.
 */
export function resolveRemote(
  on: string | undefined,
  config: EffectiveConfig,
  root: string,
  inherited: RemotePlan | null,
  env: NodeJS.ProcessEnv = process.env,
): RemotePlan | null {
  if (on === ON_LOCAL) return null;
  if (on === undefined && inherited) return inherited;
  const servers =
    on !== undefined
      ? on
          .split(",")
          .map((url) => url.trim())
          .filter(Boolean)
      : config.cluster.nats.value;
  if (!servers || servers.length === 0) return null;
  for (const url of servers) checkServerUrl(url, on !== undefined ? "--on" : "[cluster] nats");
  const c = config.cluster;
  const file = (sourced: Sourced<string | null>) => resolveConfigFile(sourced, root, env);
  return {
    servers,
    credentials: file(c.credentials),
    nkey: file(c.nkey),
    token_file: file(c.token_file),
    user: c.user.value,
    password_file: file(c.password_file),
    tls_ca: file(c.tls_ca),
    tls_cert: file(c.tls_cert),
    tls_key: file(c.tls_key),
    git_remote: c.remote.value,
    queue: c.queue.value,
    on_worker_loss: c.on_worker_loss.value,
    max_attempts: c.max_attempts.value,
    retry: {
      attempts: c.retry.value.attempts ?? DEFAULT_RETRY.attempts,
      backoff_ms: c.retry.value.backoff
        ? parseDuration(c.retry.value.backoff, "[cluster] retry.backoff")
        : DEFAULT_RETRY.backoff_ms,
      on: retryCodes(c.retry.value.on),
    },
    heartbeat_ms: parseDuration(c.heartbeat_timeout.value, "[cluster] heartbeat_timeout"),
    replicas: c.replicas.value,
  };
}

/**
 * The error codes `[cluster] retry.on` names, each one caesar gives a failure: a misspelt code would
 * silently never match, and the failure it meant would never be retried.
 */
function retryCodes(on: string[] | undefined): string[] {
  if (on === undefined) return DEFAULT_RETRY.on;
  const unknown = on.filter((code) => !isErrorCode(code));
  if (unknown.length > 0) {
    throw new UsageError(
      "config_invalid",
      `[cluster] retry.on names unknown error codes: ${unknown.join(", ")}.`,
      {
        detail: `Name codes a task's failure has (docs/errors.md), e.g. ${DEFAULT_RETRY.on.join(", ")}.`,
      },
    );
  }
  return on;
}

/**
 * A NATS server URL: nats:// or tls:// (or a bare host:port), never with credentials in it — they would
 * end up in task files that other agents can read. Credentials go in files named by `[cluster]`.
 */
export function checkServerUrl(url: string, where: string): void {
  const withScheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(url) ? url : `nats://${url}`;
  let parsed: URL;
  try {
    parsed = new URL(withScheme);
  } catch {
    throw new UsageError("invalid_nats_url", `${where}: ${JSON.stringify(url)} is not a NATS server URL.`, {
      detail: "Write nats://host:4222 (or tls://host:4222 for TLS).",
    });
  }
  if (parsed.protocol !== "nats:" && parsed.protocol !== "tls:") {
    throw new UsageError(
      "invalid_nats_url",
      `${where}: ${JSON.stringify(url)} uses ${parsed.protocol.slice(0, -1)}://, not nats:// or tls://.`,
      { detail: "Write nats://host:4222, or tls://host:4222 for TLS." },
    );
  }
  if (parsed.username !== "" || parsed.password !== "") {
    throw new UsageError("nats_credentials_in_url", `${where}: the URL carries credentials.`, {
      detail:
        "caesar keeps task settings in files other agents can read: put the credentials in a file and name it in [cluster] (credentials, nkey, token_file, or user + password_file) — see docs/cluster.md.",
    });
  }
}

/** A file named in the configuration: `~/` is the home directory; a relative path is the layer's directory. */
function resolveConfigFile(
  sourced: Sourced<string | null>,
  root: string,
  env: NodeJS.ProcessEnv,
): string | null {
  const path = sourced.value;
  if (path === null) return null;
  if (path === "~" || path.startsWith("~/")) return join(homedir(), path.slice(1));
  if (isAbsolute(path)) return path;
  const base = sourced.source === "global" ? dirname(layerPaths(root, env).global) : root;
  return resolve(base, path);
}
