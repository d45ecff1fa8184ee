import { readFileSync } from "node:fs";
import { type JetStreamClient, type JetStreamManager, jetstream, jetstreamManager } from "@nats-io/jetstream";
import { type KV, Kvm } from "@nats-io/kv";
import {
  type Authenticator,
  type ConnectionOptions,
  connect,
  credsAuthenticator,
  type NatsConnection,
  nkeyAuthenticator,
  tokenAuthenticator,
  usernamePasswordAuthenticator,
} from "@nats-io/transport-node";
import type { RemotePlan } from "../engine/store/task-plan.js";
import { CaesarError, messageOf } from "../support/errors.js";

/** What is needed to reach a cluster: its servers and how to authenticate (files, never secrets inline). */
export type ClusterAccess = Pick<
  RemotePlan,
  | "servers"
  | "credentials"
  | "nkey"
  | "token_file"
  | "user"
  | "password_file"
  | "tls_ca"
  | "tls_cert"
  | "tls_key"
>;

/** One connection to a cluster, with the JetStream and KV handles every part of caesar uses. */
export interface Cluster {
  nc: NatsConnection;
  js: JetStreamClient;
  jsm: JetStreamManager;
  kvm: Kvm;
  /** The servers, for messages. */
  servers: string;
  bucket(name: string): Promise<KV>;
  /**
   * Call `listener` each time the connection is re-established (a server restarted): consumers and
   * watches made before are recreated from where their owner got to, rather than trusted to resume.
   */
  onReconnect(listener: () => void): () => void;
  close(): Promise<void>;
}

/**
 * Connect to a cluster the way NATS clients usually do: `nats://` or `tls://` URLs, a credentials file,
 * an nkey seed, a token, or a user and password (each read from a file), TLS with a CA and a client
 * certificate. It reconnects forever: a server restarting is part of normal life, not an error.
 */
export async function connectCluster(access: ClusterAccess, name: string): Promise<Cluster> {
  const options: ConnectionOptions = {
    servers: access.servers,
    name,
    maxReconnectAttempts: -1,
    reconnectTimeWait: 500,
    waitOnFirstConnect: false,
    timeout: 10_000,
    ...authOptions(access),
  };
  const tls = tlsOptions(access);
  if (tls) options.tls = tls;
  let nc: NatsConnection;
  try {
    nc = await connect(options);
  } catch (error) {
    if (/authori[sz]ation|authentication/i.test(messageOf(error))) {
      throw new CaesarError(
        "nats_auth_refused",
        `The NATS server at ${access.servers.join(", ")} refused caesar's credentials.`,
        {
          detail: `${messageOf(error)} (caesar presented ${presentedBy(access)}).${expiryOf(access.credentials)} Check the credentials file, nkey, token or user and password_file in [cluster] (or --creds), and that this user may use JetStream (see docs/cluster.md).`,
          cause: error,
        },
      );
    }
    throw new CaesarError(
      "nats_unreachable",
      `Cannot reach the NATS server at ${access.servers.join(", ")}.`,
      {
        detail: `${messageOf(error)}. Check that nats-server runs there with JetStream (-js), and the credentials in [cluster] (see docs/cluster.md).`,
        cause: error,
      },
    );
  }
  const js = jetstream(nc, { timeout: 10_000 });
  let jsm: JetStreamManager;
  try {
    jsm = await jetstreamManager(nc, { timeout: 10_000 });
  } catch (error) {
    await nc.close().catch(() => {});
    throw new CaesarError(
      "jetstream_unavailable",
      `The NATS server at ${access.servers.join(", ")} has no JetStream for caesar.`,
      {
        // A server with JetStream says "not enabled for account" when it is the user's account that lacks it.
        detail: /account/i.test(messageOf(error))
          ? `${messageOf(error)}. The account these credentials belong to may not use JetStream: give it JetStream limits (operator mode: nsc edit account --js-disk-storage -1 --js-mem-storage -1 --js-streams -1 --js-consumer -1; a server configuration: jetstream: enabled in the account), or use credentials of an account that has them (see docs/cluster.md).`
          : `${messageOf(error)}. Start nats-server with -js (or jetstream {} in its configuration).`,
        cause: error,
      },
    );
  }
  const kvm = new Kvm(js);
  const buckets = new Map<string, Promise<KV>>();
  const reconnectListeners = new Set<() => void>();
  void (async () => {
    for await (const status of nc.status()) {
      if (status.type === "reconnect") for (const listener of [...reconnectListeners]) listener();
    }
  })().catch(() => undefined);
  return {
    nc,
    js,
    jsm,
    kvm,
    servers: access.servers.join(","),
    bucket(bucketName) {
      let bucket = buckets.get(bucketName);
      if (!bucket) {
        bucket = kvm.open(bucketName);
        buckets.set(bucketName, bucket);
        bucket.catch(() => buckets.delete(bucketName));
      }
      return bucket;
    },
    onReconnect(listener) {
      reconnectListeners.add(listener);
      return () => reconnectListeners.delete(listener);
    },
    async close() {
      await nc.drain().catch(() => nc.close());
    },
  };
}

function readSecret(path: string, what: string): string {
  try {
    return readFileSync(path, "utf8").trim();
  } catch (error) {
    throw new CaesarError("nats_credentials_unreadable", `Cannot read the NATS ${what} file ${path}.`, {
      detail: `${messageOf(error)}. Fix the path in [cluster] (see docs/cluster.md).`,
    });
  }
}

/** What caesar showed the server, for a refusal's message: the files, never what they hold. */
function presentedBy(access: ClusterAccess): string {
  const shown = [
    access.credentials ? `the credentials file ${access.credentials}` : "",
    access.nkey ? `the nkey seed in ${access.nkey}` : "",
    access.token_file ? `the token in ${access.token_file}` : "",
    access.user
      ? `user ${access.user}${access.password_file ? ` with the password in ${access.password_file}` : ""}`
      : "",
    access.tls_cert ? `the client certificate ${access.tls_cert}` : "",
  ].filter(Boolean);
  return shown.length > 0 ? shown.join(", ") : "no credentials";
}

/**
 * Why a server may have refused a credentials file, when its user JWT says it: the server answers only
 * "Authorization Violation". Judged by this machine's clock, so it is a hint after a refusal, never a
 * reason to refuse.
 */
function expiryOf(credentials: string | null): string {
  if (!credentials) return "";
  try {
    const jwt = /BEGIN NATS USER JWT-+\s+(\S+)/.exec(readFileSync(credentials, "utf8"))?.[1];
    const claims: unknown = JSON.parse(Buffer.from(jwt?.split(".")[1] ?? "", "base64url").toString("utf8"));
    const exp = (claims as { exp?: unknown }).exp;
    if (typeof exp === "number" && exp * 1000 < Date.now()) {
      return ` The user JWT in ${credentials} expired at ${new Date(exp * 1000).toISOString()}: make new credentials (nsc generate creds).`;
    }
  } catch {
    // Not a JWT we can read: the server's word is all there is.
  }
  return "";
}

/**
 * Sign a nonce once, here: the client would only parse the file during the handshake, where a
 * malformed one looks like a server out of reach. `expected` says what the file should hold.
 */
function checkedAuthenticator(
  authenticator: Authenticator,
  path: string,
  what: string,
  expected: string,
): Authenticator {
  try {
    authenticator("caesar");
  } catch (error) {
    throw new CaesarError("nats_credentials_invalid", `The NATS ${what} file ${path} is not usable.`, {
      detail: `${messageOf(error)}. It should hold ${expected}; fix the file or the path in [cluster] (see docs/cluster.md).`,
    });
  }
  return authenticator;
}

function authOptions(access: ClusterAccess): Partial<ConnectionOptions> {
  const authenticators: Authenticator[] = [];
  if (access.credentials) {
    // The client's parser wants "\n" after each marker line, the seed's last one too: what `trim`
    // removed is put back (and CRLF line ends made LF), so a file `nsc` wrote is read as it is.
    const text = `${readSecret(access.credentials, "credentials").replace(/\r\n/g, "\n")}\n`;
    authenticators.push(
      checkedAuthenticator(
        credsAuthenticator(new TextEncoder().encode(text)),
        access.credentials,
        "credentials",
        "a user JWT and its nkey seed between their marker lines, as `nsc generate creds` writes them",
      ),
    );
  }
  if (access.nkey) {
    const seed = new TextEncoder().encode(readSecret(access.nkey, "nkey seed"));
    authenticators.push(
      checkedAuthenticator(nkeyAuthenticator(seed), access.nkey, "nkey seed", "a user nkey seed (SU…)"),
    );
  }
  if (access.token_file) authenticators.push(tokenAuthenticator(readSecret(access.token_file, "token")));
  if (access.user) {
    const password = access.password_file ? readSecret(access.password_file, "password") : undefined;
    authenticators.push(usernamePasswordAuthenticator(access.user, password));
  }
  return authenticators.length > 0 ? { authenticator: authenticators } : {};
}

function tlsOptions(access: ClusterAccess): ConnectionOptions["tls"] | undefined {
  const wantsTls = access.servers.some((url) => url.startsWith("tls://"));
  if (!wantsTls && !access.tls_ca && !access.tls_cert) return undefined;
  return {
    ...(access.tls_ca ? { caFile: access.tls_ca } : {}),
    ...(access.tls_cert ? { certFile: access.tls_cert } : {}),
    ...(access.tls_key ? { keyFile: access.tls_key } : {}),
  };
}
