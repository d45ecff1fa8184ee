import { connect, isIP, type Socket } from "node:net";

/** How long an attempt has before the next address is tried beside it (RFC 8305's 250 ms). */
const STAGGER_MS = 250;
/** The most addresses of one name tried: the name may be the agent's, with as many records as it likes. */
const MOST = 8;

/**
 * A connection to the first of `addresses` (already checked by the caller) that answers on `port`, tried
 * as happy eyeballs do (RFC 8305): the families interleaved, starting with the first address's; each
 * attempt given 250 ms before the next starts beside it, the next started at once when one fails; the
 * first to connect wins and the others are closed. A name whose IPv6 is broken thus still connects over
 * IPv4. Node's own `autoSelectFamily` does not serve here: it takes a name to look up, where the proxy
 * connects only to addresses it checked, and (in Node 20) abandons an attempt when the next one starts.
 * Rejected with the last error when none connects; `abort` closes every attempt.
 */
export function connectAny(
  addresses: readonly string[],
  port: number,
): { socket: Promise<Socket>; abort: () => void } {
  const order = interleave(addresses).slice(0, MOST);
  const pending = new Set<Socket>();
  let next = 0;
  let timer: NodeJS.Timeout | undefined;
  let settled = false;
  let lastError: Error = new Error("no address to connect to");
  let settle: (socket: Socket | Error) => void = () => undefined;
  const socket = new Promise<Socket>((resolve, reject) => {
    settle = (outcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      for (const other of pending) if (other !== outcome) other.destroy();
      pending.clear();
      if (outcome instanceof Error) reject(outcome);
      else resolve(outcome);
    };
  });
  const attempt = () => {
    clearTimeout(timer);
    if (settled) return;
    if (next >= order.length) {
      if (pending.size === 0)
        settle(
          order.length > 1
            ? new Error(`none of its ${order.length} addresses answered; the last: ${lastError.message}`)
            : lastError,
        );
      return;
    }
    const address = order[next++]!;
    const candidate = connect({ host: address, port });
    pending.add(candidate);
    const onError = (error: Error) => {
      pending.delete(candidate);
      candidate.destroy();
      lastError = error;
      attempt();
    };
    candidate.once("error", onError);
    candidate.once("connect", () => {
      candidate.off("error", onError);
      pending.delete(candidate);
      settle(candidate);
    });
    timer = setTimeout(attempt, STAGGER_MS);
  };
  attempt();
  // Its caller may have gone (and aborted it): a rejection nobody awaits is no unhandled one.
  socket.catch(() => undefined);
  return { socket, abort: () => settle(new Error("the client went before a connection was made")) };
}

/** The addresses with their families alternating, the first address's family first. */
function interleave(addresses: readonly string[]): string[] {
  const unique = [...new Set(addresses)];
  const first = isIP(unique[0] ?? "");
  const same = unique.filter((address) => isIP(address) === first);
  const other = unique.filter((address) => isIP(address) !== first);
  const out: string[] = [];
  for (let i = 0; i < Math.max(same.length, other.length); i++) {
    if (i < same.length) out.push(same[i]!);
    if (i < other.length) out.push(other[i]!);
  }
  return out;
}
