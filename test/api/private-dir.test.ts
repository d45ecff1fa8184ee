import {
  chmodSync,
  chownSync,
  existsSync,
  mkdirSync,
  readFileSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { listServeAddresses, writeServeAddress } from "../../src/api/address-file.js";
import { ensurePrivateDir, serveDir } from "../../src/api/security/private-dir.js";
import { loadOrCreateToken, readToken, tokenPath } from "../../src/api/security/token.js";
import { parseJsonOutput, runCaesar } from "../helpers/cli.js";
import { makeRepo } from "../helpers/repo.js";

/**
 * The token lives in a directory only its user can open. Anything that would let another user read it — or
 * make caesar write it where they can — is refused with what to do, never used and never silently repaired.
 */

const IS_ROOT = process.getuid?.() === 0;
const NOBODY = 65534;

async function refusal(
  promise: Promise<unknown>,
): Promise<{ code: string; message: string; detail: string }> {
  try {
    await promise;
  } catch (error) {
    const { code, message, detail } = error as { code: string; message: string; detail: string };
    return { code, message, detail };
  }
  throw new Error("expected a refusal");
}

describe("the private directory", () => {
  it("is created 0700 with a 0600 token inside, whatever the umask", async () => {
    const root = makeRepo();
    const previous = process.umask(0);
    try {
      const token = await loadOrCreateToken(root);
      expect(token).toMatch(/^[0-9a-f]{64}$/);
    } finally {
      process.umask(previous);
    }
    expect(statSync(serveDir(root)).mode & 0o777).toBe(0o700);
    expect(statSync(tokenPath(root)).mode & 0o777).toBe(0o600);
    expect(await readToken(root)).toBe(readFileSync(tokenPath(root), "utf8").trim());
  });

  it("servers starting together agree on one token; it is reused after", async () => {
    const root = makeRepo();
    const tokens = await Promise.all(Array.from({ length: 8 }, () => loadOrCreateToken(root)));
    expect(new Set(tokens).size).toBe(1);
    expect(await loadOrCreateToken(root)).toBe(tokens[0]);
  });

  it("removes 0.1's token file, which any local page could obtain", async () => {
    const root = makeRepo();
    mkdirSync(join(root, ".caesar", "state"), { recursive: true });
    writeFileSync(join(root, ".caesar", "state", "serve-token"), `${"a".repeat(64)}\n`);
    expect(await loadOrCreateToken(root)).not.toBe("a".repeat(64));
    expect(existsSync(join(root, ".caesar", "state", "serve-token"))).toBe(false);
  });

  it("refuses a directory other users can open, and says to remove it rather than chmod it", async () => {
    const root = makeRepo();
    await ensurePrivateDir(root);
    chmodSync(serveDir(root), 0o755);
    const refused = await refusal(loadOrCreateToken(root));
    expect(refused.code).toBe("unsafe_private_dir");
    expect(refused.message).toBe(
      `Refusing to use ${serveDir(root)}: other users have access to it (mode 0755).`,
    );
    expect(refused.detail).toContain(`rm -r ${serveDir(root)}`);
    expect(refused.detail).toContain("may have been read");
  });

  it("refuses a directory that is a symbolic link, even to a private directory", async () => {
    const root = makeRepo();
    const elsewhere = join(makeRepo(), "private");
    mkdirSync(elsewhere, { mode: 0o700 });
    mkdirSync(join(root, ".caesar", "state"), { recursive: true });
    symlinkSync(elsewhere, serveDir(root));
    const refused = await refusal(loadOrCreateToken(root));
    expect(refused.code).toBe("unsafe_private_dir");
    expect(refused.message).toContain("it is a symbolic link");
    expect(existsSync(join(elsewhere, "token"))).toBe(false);
  });

  it("refuses a token file that is a link, or that others can read", async () => {
    const root = makeRepo();
    const dir = await ensurePrivateDir(root);
    const target = join(makeRepo(), "planted");
    writeFileSync(target, `${"p".repeat(64)}\n`, { mode: 0o600 });
    symlinkSync(target, join(dir, "token"));
    const linked = await refusal(loadOrCreateToken(root));
    expect(linked.code).toBe("unsafe_private_file");
    expect(linked.message).toContain("symbolic link");

    const other = makeRepo();
    const otherDir = await ensurePrivateDir(other);
    writeFileSync(join(otherDir, "token"), `${"r".repeat(64)}\n`, { mode: 0o644 });
    chmodSync(join(otherDir, "token"), 0o644);
    const readable = await refusal(readToken(other));
    expect(readable.code).toBe("unsafe_private_file");
    expect(readable.message).toContain("mode 0644");
  });

  it.skipIf(!IS_ROOT)(
    "refuses a directory or a token owned by another user (needs root to chown)",
    async () => {
      const root = makeRepo();
      const dir = await ensurePrivateDir(root);
      chownSync(dir, NOBODY, NOBODY);
      const directory = await refusal(loadOrCreateToken(root));
      expect(directory.message).toContain(`it belongs to another user (uid ${NOBODY})`);

      const other = makeRepo();
      await loadOrCreateToken(other);
      chownSync(tokenPath(other), NOBODY, NOBODY);
      const file = await refusal(readToken(other));
      expect(file.code).toBe("unsafe_private_file");
      expect(file.message).toContain("another user");
    },
  );

  it("caesar serve refuses to start on an unsafe directory and says why (exit 1)", async () => {
    const root = makeRepo();
    mkdirSync(serveDir(root), { recursive: true, mode: 0o777 });
    chmodSync(serveDir(root), 0o777);
    const result = await runCaesar(["serve", "--port", "0", "--json"], { cwd: root });
    expect(result.code).toBe(1);
    const { error } = parseJsonOutput<{ error: { code: string; summary: string } }>(result);
    expect(error.code).toBe("unsafe_private_dir");
    expect(error.summary).toContain("mode 0777");
    expect(existsSync(join(serveDir(root), "token"))).toBe(false);
  });
});

describe("address files", () => {
  it("are listed only while their process lives; a malformed one is skipped", async () => {
    const root = makeRepo();
    const base = {
      url: "http://127.0.0.1:1/",
      host: "127.0.0.1",
      port: 1,
      started_at: "2030-01-01T00:00:00Z",
    };
    await writeServeAddress(root, {
      ...base,
      pid: process.pid,
      runId: "00000000-0000-4000-8000-000000000001",
      token: "file",
    });
    // A pid that cannot be running (above pid_max): a server that died without cleaning up.
    await writeServeAddress(root, {
      ...base,
      pid: 2 ** 22 + 1,
      runId: "00000000-0000-4000-8000-000000000002",
      token: "file",
    });
    writeFileSync(join(serveDir(root), "server-garbage.json"), "{", { mode: 0o600 });
    const live = await listServeAddresses(root);
    expect(live.map((address) => address.runId)).toEqual(["00000000-0000-4000-8000-000000000001"]);
    expect(existsSync(join(serveDir(root), "server-00000000-0000-4000-8000-000000000002.json"))).toBe(false);
  });

  it("are not listed from a directory that is not private", async () => {
    const root = makeRepo();
    const dir = await ensurePrivateDir(root);
    chmodSync(dir, 0o755);
    const refused = await refusal(listServeAddresses(root));
    expect(refused.code).toBe("unsafe_private_dir");
  });
});
