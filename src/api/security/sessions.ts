import { createHash, randomBytes } from "node:crypto";
import { tokenMatches } from "./token.js";

/** The header a cookie-authenticated mutation carries its session's CSRF secret in. */
export const CSRF_HEADER = "X-Caesar-CSRF";
/** A login code or a session secret as sent: 32 random bytes, base64url. */
export const SECRET_PATTERN = /^[A-Za-z0-9_-]{43}$/;

/** Bounds, so that a flood of logins cannot grow the server's memory. */
const MAX_CODES = 32;
const MAX_SESSIONS = 256;

export interface Session {
  /** The secret the page must echo in X-Caesar-CSRF on every mutation. */
  csrf: string;
  createdAt: number;
}

/**
 * The dashboard's logins, Jupyter-style, held in this server's memory only — so every session is bound to
 * this run of the server and ends with it. `caesar serve` prints a one-time login URL carrying a code; the
 * page trades the code for a session (an HttpOnly cookie) and a CSRF secret, and the code is spent.
 * Only hashes of codes and session secrets are kept.
 */
export class LoginSessions {
  private readonly codes = new Map<string, number>();
  private readonly sessions = new Map<string, Session>();

  /** A new one-time login code (the oldest outstanding ones are dropped past a bound). */
  mintCode(): string {
    const code = newSecret();
    this.codes.set(hash(code), Date.now());
    dropOldest(this.codes, MAX_CODES);
    return code;
  }

  /** Spend a code: a new session and its CSRF secret, or `undefined` for a code never minted or used already. */
  redeem(code: string): { session: string; csrf: string } | undefined {
    if (!SECRET_PATTERN.test(code) || !this.codes.delete(hash(code))) return undefined;
    const session = newSecret();
    const csrf = newSecret();
    this.sessions.set(hash(session), { csrf, createdAt: Date.now() });
    dropOldest(this.sessions, MAX_SESSIONS);
    return { session, csrf };
  }

  /** The session a cookie names, if this run of the server created it. */
  find(session: string | undefined): Session | undefined {
    if (session === undefined || !SECRET_PATTERN.test(session)) return undefined;
    return this.sessions.get(hash(session));
  }

  /** Does the presented CSRF secret belong to the session (constant time)? */
  static csrfMatches(session: Session, presented: string | undefined): boolean {
    return presented !== undefined && tokenMatches(presented, session.csrf);
  }
}

/**
 * The cookie's name carries the port: cookies are per host, not per port, so two servers on 127.0.0.1 would
 * otherwise overwrite each other's session.
 */
export function sessionCookieName(port: number): string {
  return `caesar_session_${port}`;
}

function newSecret(): string {
  return randomBytes(32).toString("base64url");
}

/** Map keys are hashes: comparing by lookup then leaks nothing of a secret through timing. */
function hash(secret: string): string {
  return createHash("sha256").update(secret).digest("base64url");
}

function dropOldest(map: Map<string, unknown>, max: number): void {
  for (const key of map.keys()) {
    if (map.size <= max) break;
    map.delete(key);
  }
}
