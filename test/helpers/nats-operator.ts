import { writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  createAccount,
  createOperator,
  createUser,
  encodeAccount,
  encodeOperator,
  encodeUser,
  fmtCreds,
  type KeyPair,
} from "@nats-io/jwt";

/**
 * What `nsc` makes for a NATS deployment in operator mode, made here with the NATS project's own JWT
 * library: an operator, a system account, an application account allowed JetStream, and `.creds` files
 * (a user JWT its account signed, and the user's nkey seed).
 */
export interface OperatorMode {
  /** The server's configuration file (operator JWT, system account, a memory resolver preloaded). */
  config: string;
  /** A user of the application account: JetStream allowed. */
  creds: string;
  /** A user of an account the operator never signed: the server does not know it. */
  foreignCreds: string;
  /** A user of the application account whose JWT expired an hour ago. */
  expiredCreds: string;
  /** A user of another account the operator signed, without JetStream limits: no JetStream for it. */
  noJetStreamCreds: string;
}

// An account JWT without limits gets zeros: no connection, no subscription, no JetStream at all.
const UNLIMITED = {
  conn: -1,
  subs: -1,
  data: -1,
  payload: -1,
  leaf: -1,
  imports: -1,
  exports: -1,
  wildcards: true,
};
const UNLIMITED_JETSTREAM = { mem_storage: -1, disk_storage: -1, streams: -1, consumer: -1 };

async function writeCreds(
  path: string,
  name: string,
  account: KeyPair,
  options: { exp?: number } = {},
): Promise<string> {
  const user = createUser();
  const jwt = await encodeUser(name, user, account, {}, options);
  writeFileSync(path, fmtCreds(jwt, user), { mode: 0o600 });
  return path;
}

export async function makeOperatorMode(dir: string): Promise<OperatorMode> {
  const operator = createOperator();
  const system = createAccount();
  const app = createAccount();
  const operatorJwt = await encodeOperator("caesar-test", operator, {
    system_account: system.getPublicKey(),
  });
  const systemJwt = await encodeAccount("SYS", system, { limits: UNLIMITED }, { signer: operator });
  const appJwt = await encodeAccount(
    "CAESAR",
    app,
    { limits: { ...UNLIMITED, ...UNLIMITED_JETSTREAM } },
    { signer: operator },
  );
  const plain = createAccount();
  const plainJwt = await encodeAccount("PLAIN", plain, { limits: UNLIMITED }, { signer: operator });
  const config = join(dir, "operator.conf");
  writeFileSync(
    config,
    [
      `operator: ${operatorJwt}`,
      `system_account: ${system.getPublicKey()}`,
      "resolver: MEMORY",
      "resolver_preload: {",
      `  ${app.getPublicKey()}: ${appJwt}`,
      `  ${plain.getPublicKey()}: ${plainJwt}`,
      `  ${system.getPublicKey()}: ${systemJwt}`,
      "}",
      "",
    ].join("\n"),
  );
  // An account signed by itself rather than by the operator: its users are strangers to the server.
  const stranger = createAccount();
  const hourAgo = Math.floor(Date.now() / 1000) - 3600;
  return {
    config,
    creds: await writeCreds(join(dir, "caesar.creds"), "caesar", app),
    foreignCreds: await writeCreds(join(dir, "foreign.creds"), "stranger", stranger),
    expiredCreds: await writeCreds(join(dir, "expired.creds"), "expired", app, { exp: hourAgo }),
    noJetStreamCreds: await writeCreds(join(dir, "plain.creds"), "plain", plain),
  };
}
