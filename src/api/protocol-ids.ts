/** The identifiers of the two HTTP vocabularies `caesar serve` speaks, and the names they share. */

/** The read-only agent query contract (docs/api.md). */
export const AGENT_PROTOCOL = "cz-agent/1";
/** The separate, authenticated mutation vocabulary. */
export const MUTATE_PROTOCOL = "cz-mutate/1";

/** Every result says where its data comes from: observed from real runs, never simulated. */
export const PROVENANCE = "observed";

/**
 * The local operator header required on every POST. An origin safeguard (a browser cannot send it
 * cross-origin without a CORS preflight, which this server never grants) — not authentication.
 */
export const OPERATOR_HEADER = "X-Commit-Zero";
export const OPERATOR_HEADER_VALUE = "local-demo";

export const PATHS = {
  capabilities: "/api/agent/v1",
  schema: "/api/agent/v1/schema",
  query: "/api/agent/v1/query",
  state: "/api/state",
  mutateCapabilities: "/api/mutate/v1",
  mutateSchema: "/api/mutate/v1/schema",
  mutate: "/api/mutate/v1/request",
  /** The mutation vocabulary's document again, at the discovery path docs/api.md explains. */
  commonsProtocol: "/api/commons/protocol",
  session: "/api/session",
  login: "/login",
  loginLinks: "/api/login-links",
  /** A server proves it holds the workspace's key (an HMAC of the client's nonce), before the key is sent. */
  prove: "/api/prove",
  tasks: "/api/tasks",
  stream: "/api/stream",
} as const;

/** The largest request body accepted (bytes); larger ones get 413. */
export const MAX_BODY_BYTES = 256 * 1024;

/** Where `caesar serve` listens unless told otherwise (and where `caesar query` looks when nothing says). */
export const DEFAULT_PORT = 4173;
export const DEFAULT_HOST = "127.0.0.1";
