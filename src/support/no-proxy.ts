import { isIP } from "node:net";

/**
 * `NO_PROXY` (or `no_proxy`): the hosts reached without the machine's proxy, as curl, wget, Python and Go
 * read it — a comma-separated list (blanks around entries ignored, case ignored), where
 * - `*` alone is every host;
 * - `example.com`, `.example.com` and `*.example.com` are that domain and every name under it (a whole
 *   label: `badexample.com` is not under `example.com`);
 * - an IP address is that address (`::1` or `[::1]`);
 * - any of them with `:port` only on that port.
 * CIDR ranges (`10.0.0.0/8`) are not understood: such an entry matches nothing, so what it meant to bypass
 * goes through the machine's proxy — the stricter way.
 */
export interface NoProxyEntry {
  /** Lower case, without brackets, dots or `*.` in front; `*` for every host. */
  host: string;
  port: number | null;
}

export function parseNoProxy(text: string | undefined): NoProxyEntry[] {
  const entries: NoProxyEntry[] = [];
  for (const raw of (text ?? "").split(",")) {
    let entry = raw.trim().toLowerCase();
    if (entry === "") continue;
    if (entry === "*") {
      entries.push({ host: "*", port: null });
      continue;
    }
    let port: number | null = null;
    const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(entry);
    if (bracketed) {
      entry = bracketed[1]!;
      port = bracketed[2] ? Number(bracketed[2]) : null;
    } else if (!isIP(entry)) {
      const withPort = /^(.*):(\d+)$/.exec(entry);
      if (withPort) {
        entry = withPort[1]!;
        port = Number(withPort[2]);
      }
    }
    const host = entry.replace(/^\*?\.+/, "").replace(/\.$/, "");
    if (host === "" || host.includes("/")) continue;
    entries.push({ host, port });
  }
  return entries;
}

/** Whether `host:port` is reached without the machine's proxy. */
export function bypassesProxy(entries: readonly NoProxyEntry[], host: string, port: number): boolean {
  const wanted = host
    .toLowerCase()
    .replace(/^\[|\]$/g, "")
    .replace(/\.$/, "");
  return entries.some((entry) => {
    if (entry.port !== null && entry.port !== port) return false;
    if (entry.host === "*") return true;
    if (isIP(entry.host) || isIP(wanted)) return entry.host === wanted;
    return wanted === entry.host || wanted.endsWith(`.${entry.host}`);
  });
}
