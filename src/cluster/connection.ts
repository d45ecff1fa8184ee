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
          detail: `${messageOf(error)}. Check the credentials file, nkey, token or user and password_file in [cluster] (or --creds), and that this user may use JetStream (see docs/cluster.md).`,
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
      `The NATS server at ${access.servers.join(", ")} has no JetStream.`,
      {
        detail: `${messageOf(error)}. Start nats-server with -js (or jetstream {} in its configuration).`,
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

function authOptions(access: ClusterAccess): Partial<ConnectionOptions> {
  const authenticators: Authenticator[] = [];
  if (access.credentials) {
    const creds = new TextEncoder().encode(readSecret(access.credentials, "credentials"));
    authenticators.push(credsAuthenticator(creds));
  }
  if (access.nkey) {
    const seed = new TextEncoder().encode(readSecret(access.nkey, "nkey seed"));
    authenticators.push(nkeyAuthenticator(seed));
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
