import { randomUUID } from "node:crypto";
import { AGENT_PROTOCOL, OPERATOR_HEADER, OPERATOR_HEADER_VALUE, PATHS } from "../../api/protocol-ids.js";
import { isLoopbackHost } from "../../api/security/access.js";
import { isProof, makeNonce } from "../../api/security/proof.js";
import { isThrownCode } from "../../support/error-catalogue.js";
import { CaesarError, messageOf, UsageError } from "../../support/errors.js";

/** A response of the query contract. */
export interface QueryResponse<R = unknown> {
  protocol: string;
  requestId: string;
  runId: string;
  revision: number;
  provenance: string;
  operation: string;
  result: R;
}

/**
 * A server origin given by the user (CAESAR_URL, --server) or read from an address file. Only plain-HTTP
 * loopback origins are accepted: this client never talks to another machine.
 */
export function parseLocalUrl(raw: string, source: string): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new UsageError("invalid_url", `${source} ${JSON.stringify(raw)} is not a URL.`, {
      detail: "Give the local server's origin, e.g. http://127.0.0.1:4173.",
    });
  }
  if (
    url.protocol !== "http:" ||
    !isLoopbackHost(url.hostname) ||
    url.username ||
    url.password ||
    (url.pathname !== "/" && url.pathname !== "")
  ) {
    throw new UsageError(
      "non_local_endpoint",
      `Refusing ${url.origin}${url.pathname === "/" ? "" : url.pathname} (${source}): not a local caesar server.`,
      {
        detail:
          "caesar only talks to http://127.0.0.1, http://localhost or http://[::1] (an origin, no path): give one, or unset CAESAR_URL.",
      },
    );
  }
  return new URL(url.origin);
}

/** A client of the query contract that follows no redirect and never retries. */
export class AgentClient {
  constructor(readonly base: URL) {}

  async get<T>(path: string): Promise<T> {
    return this.send<T>(path, { method: "GET" });
  }

  /** Read the current revision, then send one query based on it. A conflict is reported, not retried. */
  async query<R = unknown>(operation: string, args: Record<string, unknown>): Promise<QueryResponse<R>> {
    const state = await this.get<{ runId: string; version: number }>(PATHS.state);
    return this.send<QueryResponse<R>>(PATHS.query, {
      method: "POST",
      headers: { "Content-Type": "application/json", [OPERATOR_HEADER]: OPERATOR_HEADER_VALUE },
      body: JSON.stringify({
        protocol: AGENT_PROTOCOL,
        requestId: randomUUID(),
        runId: state.runId,
        revision: state.version,
        operation,
        arguments: args,
      }),
    });
  }

  /**
   * Send one mutation (a cz-mutate/1 envelope, its revision the caller's own: the decision it was based
   * on) as the bearer token's holder. A stale revision is reported (409), never retried.
   */
  async mutate<R = unknown>(envelope: unknown, token: string): Promise<R> {
    await this.proveServer(token);
    return this.send<R>(PATHS.mutate, {
      method: "POST",
      headers: {
        "Content-Type": "application/json",
        [OPERATOR_HEADER]: OPERATOR_HEADER_VALUE,
        Authorization: `Bearer ${token}`,
      },
      body: JSON.stringify(envelope),
    });
  }

  /**
   * Make the server prove it holds `token` (security/proof.ts) without sending it: nothing is sent with the
   * token before this resolves. Throws server_unproven when the answer is not the proof.
   */
  async proveServer(token: string): Promise<void> {
    const nonce = makeNonce();
    let answer: unknown;
    try {
      answer = (
        await this.send<{ proof?: unknown }>(PATHS.prove, {
          method: "POST",
          headers: { "Content-Type": "application/json" },
          body: JSON.stringify({ nonce }),
        })
      ).proof;
    } catch (error) {
      throw unproven(this.base, `it did not answer the challenge (${messageOf(error)})`);
    }
    if (!isProof(answer, token, this.base.origin, nonce))
      throw unproven(this.base, "its answer to the challenge is not made with this workspace's key");
  }

  /** Ask the server for a one-time dashboard login URL; only the bearer token's holder may. */
  async mintLoginLink(token: string): Promise<{ url: string }> {
    return this.send<{ url: string }>(PATHS.loginLinks, {
      method: "POST",
      headers: {
        "Content-Type": "application/json",
        [OPERATOR_HEADER]: OPERATOR_HEADER_VALUE,
        Authorization: `Bearer ${token}`,
      },
      body: "{}",
    });
  }

  private async send<T>(path: string, init: RequestInit): Promise<T> {
    const url = new URL(path, this.base);
    let response: Response;
    try {
      response = await fetch(url, { ...init, redirect: "manual" });
    } catch (error) {
      throw new CaesarError("server_unreachable", `No caesar server answers at ${this.base.origin}.`, {
        detail: `${(error as Error).cause instanceof Error ? ((error as Error).cause as Error).message : (error as Error).message}. Start one with \`caesar serve\` in the workspace, or set CAESAR_URL.`,
      });
    }
    if (response.status >= 300 && response.status < 400) {
      throw new CaesarError(
        "redirect_refused",
        `${url.origin} answered ${init.method} ${path} with a redirect (${response.status}).`,
        {
          detail: `To ${JSON.stringify(response.headers.get("location") ?? "")}. caesar query follows no redirect: point CAESAR_URL at the caesar server itself.`,
        },
      );
    }
    const text = await response.text();
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      throw new CaesarError(
        "invalid_response",
        `${url.origin} answered ${init.method} ${path} with something that is not JSON (${response.status}).`,
        {
          detail: "Is CAESAR_URL a caesar server?",
        },
      );
    }
    if (!response.ok) throw serverError(response.status, body);
    return body as T;
  }
}

function unproven(base: URL, why: string): CaesarError {
  return new CaesarError(
    "server_unproven",
    `The server at ${base.origin} did not prove it is this workspace's: ${why}. The key was not sent.`,
    {
      detail:
        "Something else may listen there. Start `caesar serve` in this workspace (its address file says where it listens), or point --server / CAESAR_URL at it; if it was started with --token, pass the same --token @file.",
    },
  );
}

function serverError(status: number, body: unknown): CaesarError {
  const error = (body as { error?: { code?: string; summary?: string; detail?: string } })?.error ?? {};
  if (status === 409) {
    return new CaesarError(
      "conflict",
      `Conflict (409 ${error.code ?? "stale"}): ${error.summary ?? "the workspace changed."}`,
      {
        detail:
          "Not retried. The workspace changed between reading its revision and the query: run the command again.",
        data: { status, error },
      },
    );
  }
  // The server's own code, when this caesar knows it; a code of another version (or none) is not one of
  // this catalogue's: the server's words still say what happened.
  if (isThrownCode(error.code)) {
    return new CaesarError(error.code, error.summary ?? `The server answered ${status}.`, {
      detail: error.detail ?? "",
      data: { status },
    });
  }
  return new CaesarError(
    "invalid_response",
    `The server answered ${status}${error.code ? ` (${error.code})` : ""}: ${error.summary ?? "no error this caesar knows."}`,
    { detail: error.detail ?? "Is CAESAR_URL a caesar server of this version?", data: { status, error } },
  );
}
