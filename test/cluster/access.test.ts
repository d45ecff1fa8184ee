import { execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { nkeys } from "@nats-io/transport-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ClusterAccess, connectCluster } from "../../src/cluster/connection.js";
import { ensureInfrastructure } from "../../src/cluster/setup.js";
import { parseJsonOutput, runCaesar } from "../helpers/cli.js";
import { accessTo, freePort, NatsServer, requireNatsServer } from "../helpers/cluster.js";
import { makeRepo, tempDir, writeConfig } from "../helpers/repo.js";

const NATS_SERVER = requireNatsServer();

const NO_ACCESS: ClusterAccess = accessTo();

/** A throwaway certificate authority and a server certificate it signed for 127.0.0.1. */
function makeCertificates(dir: string): { ca: string; cert: string; key: string } {
  const at = (name: string) => join(dir, name);
  const openssl = (...args: string[]) => execFileSync("openssl", args, { stdio: "ignore" });
  const ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"];
  openssl(
    "req",
    "-x509",
    ...ec,
    "-subj",
    "/CN=caesar test CA",
    "-keyout",
    at("ca.key"),
    "-out",
    at("ca.pem"),
    "-days",
    "2",
  );
  openssl("req", ...ec, "-subj", "/CN=127.0.0.1", "-keyout", at("server.key"), "-out", at("server.csr"));
  writeFileSync(at("san.ext"), "subjectAltName=IP:127.0.0.1,DNS:localhost\n");
  openssl(
    "x509",
    "-req",
    "-in",
    at("server.csr"),
    "-CA",
    at("ca.pem"),
    "-CAkey",
    at("ca.key"),
    "-CAcreateserial",
    "-out",
    at("server.pem"),
    "-days",
    "2",
    "-extfile",
    at("san.ext"),
  );
  return { ca: at("ca.pem"), cert: at("server.pem"), key: at("server.key") };
}

describe.skipIf(!NATS_SERVER)("NATS authentication and TLS, as NATS clients take them", () => {
  let dir: string;
  let server: NatsServer;
  let url: string;
  let certs: { ca: string; cert: string; key: string };
  let passwordFile: string;

  beforeAll(async () => {
    dir = tempDir("caesar-nats-access-");
    certs = makeCertificates(dir);
    passwordFile = join(dir, "password");
    writeFileSync(passwordFile, "s3cret-pass\n", { mode: 0o600 });
    const port = await freePort();
    server = new NatsServer(NATS_SERVER!, port, dir, [
      "--user",
      "dev",
      "--pass",
      "s3cret-pass",
      "--tls",
      "--tlscert",
      certs.cert,
      "--tlskey",
      certs.key,
    ]);
    await server.start();
    url = `tls://127.0.0.1:${port}`;
  }, 60_000);

  afterAll(async () => {
    await server?.stop();
  });

  it("connects over tls:// with a CA file, a user and a password read from a file, and uses JetStream", async () => {
    const cluster = await connectCluster(
      { ...NO_ACCESS, servers: [url], tls_ca: certs.ca, user: "dev", password_file: passwordFile },
      "test",
    );
    try {
      await ensureInfrastructure(cluster);
      const kv = await cluster.bucket("caesar-control");
      await kv.put("probe", "over tls");
      expect(new TextDecoder().decode((await kv.get("probe"))?.value)).toBe("over tls");
    } finally {
      await cluster.close();
    }
  });

  it("says the server refused the credentials, and that the CA is unknown, with stable codes", async () => {
    const wrong = join(dir, "wrong-password");
    writeFileSync(wrong, "not-it\n");
    await expect(
      connectCluster(
        { ...NO_ACCESS, servers: [url], tls_ca: certs.ca, user: "dev", password_file: wrong },
        "test",
      ),
    ).rejects.toMatchObject({ code: "nats_auth_refused" });
    // No CA given: the server's certificate cannot be verified, and nothing is sent in the clear.
    await expect(
      connectCluster({ ...NO_ACCESS, servers: [url], user: "dev", password_file: passwordFile }, "test"),
    ).rejects.toMatchObject({ code: "nats_unreachable" });
    await expect(
      connectCluster(
        { ...NO_ACCESS, servers: [url], tls_ca: certs.ca, user: "dev", password_file: join(dir, "missing") },
        "test",
      ),
    ).rejects.toMatchObject({ code: "nats_credentials_unreadable" });
    // tls:// to a server without TLS: refused, never plain text instead.
    const plain = new NatsServer(NATS_SERVER!, await freePort(), tempDir("caesar-nats-plain-"));
    await plain.start();
    try {
      await expect(
        connectCluster(
          { ...NO_ACCESS, servers: [`tls://127.0.0.1:${plain.port}`], tls_ca: certs.ca },
          "test",
        ),
      ).rejects.toMatchObject({ code: "nats_unreachable", detail: expect.stringMatching(/tls/i) });
    } finally {
      await plain.stop();
    }
  });

  it("takes them from [cluster] in the configuration: caesar cluster status and caesar worker", async () => {
    const root = makeRepo();
    writeConfig(root, "", ["napper"]);
    const home = join(dir, "home");
    const env = { HOME: home, XDG_CONFIG_HOME: join(home, ".config") };
    const cluster = (password: string) =>
      [
        "[cluster]",
        `nats = "${url}"`,
        'user = "dev"',
        `password_file = "${password}"`,
        `tls_ca = "${certs.ca}"`,
        "",
      ].join("\n");
    writeFileSync(join(root, ".caesar", "config.local.toml"), cluster(passwordFile));
    const status = await runCaesar(["cluster", "status", "--json"], { cwd: root, env });
    expect(status.code, status.stderr).toBe(0);
    expect(parseJsonOutput<{ servers: string; workers: unknown[] }>(status)).toMatchObject({
      servers: url,
      workers: [],
    });

    // A worker whose credentials are refused stops at once with the reason, rather than retrying forever.
    writeFileSync(join(root, ".caesar", "config.local.toml"), cluster(join(dir, "wrong-password")));
    const worker = await runCaesar(["worker", "--agents", "napper", "--json"], {
      cwd: root,
      env,
      timeoutMs: 60_000,
    });
    expect(worker.code).not.toBe(0);
    expect(worker.stderr + worker.stdout).toContain("nats_auth_refused");
  });
});

/** A client certificate signed by the same CA (for a server that verifies its clients). */
function makeClientCertificate(dir: string): { cert: string; key: string } {
  const at = (name: string) => join(dir, name);
  const openssl = (...args: string[]) => execFileSync("openssl", args, { stdio: "ignore" });
  openssl(
    "req",
    "-newkey",
    "ec",
    "-pkeyopt",
    "ec_paramgen_curve:prime256v1",
    "-nodes",
    "-subj",
    "/CN=caesar worker",
    "-keyout",
    at("client.key"),
    "-out",
    at("client.csr"),
  );
  writeFileSync(at("client.ext"), "extendedKeyUsage=clientAuth\n");
  openssl(
    "x509",
    "-req",
    "-in",
    at("client.csr"),
    "-CA",
    at("ca.pem"),
    "-CAkey",
    at("ca.key"),
    "-CAcreateserial",
    "-out",
    at("client.pem"),
    "-days",
    "2",
    "-extfile",
    at("client.ext"),
  );
  return { cert: at("client.pem"), key: at("client.key") };
}

/** Connect, use JetStream once (a KV round trip), close. */
async function useJetStream(access: ClusterAccess): Promise<string | undefined> {
  const cluster = await connectCluster(access, "test");
  try {
    await ensureInfrastructure(cluster);
    const kv = await cluster.bucket("caesar-control");
    await kv.put("probe", "authenticated");
    return new TextDecoder().decode((await kv.get("probe"))?.value);
  } finally {
    await cluster.close();
  }
}

describe.skipIf(!NATS_SERVER)("NATS token, nkey and mutual TLS, each against a real nats-server", () => {
  it("a token read from token_file; a wrong one is refused", async () => {
    const dir = tempDir("caesar-nats-token-");
    const server = new NatsServer(NATS_SERVER!, await freePort(), dir, ["--auth", "t0ken-for-caesar"]);
    await server.start();
    try {
      const token = join(dir, "token");
      writeFileSync(token, "t0ken-for-caesar\n", { mode: 0o600 });
      expect(await useJetStream({ ...NO_ACCESS, servers: [server.url], token_file: token })).toBe(
        "authenticated",
      );
      const wrong = join(dir, "wrong-token");
      writeFileSync(wrong, "not-the-token\n", { mode: 0o600 });
      await expect(
        connectCluster({ ...NO_ACCESS, servers: [server.url], token_file: wrong }, "test"),
      ).rejects.toMatchObject({ code: "nats_auth_refused" });
    } finally {
      await server.stop();
    }
  });

  it("an nkey seed read from a file: the server knows only the public key; another seed is refused", async () => {
    const dir = tempDir("caesar-nats-nkey-");
    const user = nkeys.createUser();
    const config = join(dir, "server.conf");
    writeFileSync(config, `authorization { users = [ { nkey: "${user.getPublicKey()}" } ] }\n`);
    const server = new NatsServer(NATS_SERVER!, await freePort(), dir, ["-c", config]);
    await server.start();
    try {
      const seed = join(dir, "user.nk");
      writeFileSync(seed, `${new TextDecoder().decode(user.getSeed())}\n`, { mode: 0o600 });
      expect(await useJetStream({ ...NO_ACCESS, servers: [server.url], nkey: seed })).toBe("authenticated");
      const other = join(dir, "other.nk");
      writeFileSync(other, `${new TextDecoder().decode(nkeys.createUser().getSeed())}\n`, { mode: 0o600 });
      await expect(
        connectCluster({ ...NO_ACCESS, servers: [server.url], nkey: other }, "test"),
      ).rejects.toMatchObject({ code: "nats_auth_refused" });
      // A public key where the seed should be: said before anything is sent, naming the file.
      const notSeed = join(dir, "public.nk");
      writeFileSync(notSeed, `${user.getPublicKey()}\n`, { mode: 0o600 });
      await expect(
        connectCluster({ ...NO_ACCESS, servers: [server.url], nkey: notSeed }, "test"),
      ).rejects.toMatchObject({
        code: "nats_credentials_invalid",
        message: expect.stringContaining(notSeed),
      });
    } finally {
      await server.stop();
    }
  });

  it("mutual TLS: a client certificate the server's CA signed gets in; without one, nothing", async () => {
    const dir = tempDir("caesar-nats-mtls-");
    const certs = makeCertificates(dir);
    const client = makeClientCertificate(dir);
    const port = await freePort();
    const server = new NatsServer(NATS_SERVER!, port, dir, [
      "--tlsverify",
      "--tlscert",
      certs.cert,
      "--tlskey",
      certs.key,
      "--tlscacert",
      certs.ca,
    ]);
    await server.start();
    const url = `tls://127.0.0.1:${port}`;
    try {
      expect(
        await useJetStream({
          ...NO_ACCESS,
          servers: [url],
          tls_ca: certs.ca,
          tls_cert: client.cert,
          tls_key: client.key,
        }),
      ).toBe("authenticated");
      await expect(
        connectCluster({ ...NO_ACCESS, servers: [url], tls_ca: certs.ca }, "test"),
      ).rejects.toMatchObject({ code: expect.stringMatching(/^nats_(unreachable|auth_refused)$/) });
    } finally {
      await server.stop();
    }
  });
});
