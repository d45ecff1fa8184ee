import { homedir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { mergeLayers } from "../../src/config/effective.js";
import type { ConfigFile } from "../../src/config/schema.js";
import { resolvePlan } from "../../src/engine/lifecycle/plan.js";
import { resolveRemote } from "../../src/engine/lifecycle/remote-plan.js";
import { parseDelegationRequest } from "../../src/engine/lifecycle/request.js";
import { git, makeRepo, tempDir, writeConfig } from "../helpers/repo.js";

const config = (layers: ["global" | "project" | "local", ConfigFile][]) =>
  mergeLayers(layers.map(([layer, file]) => [layer, `/${layer}.toml`, file]));

describe("where a task runs: --on, [cluster], the parent's cluster", () => {
  const none = config([]);

  it("runs here without --on and without [cluster] nats", () => {
    expect(resolveRemote(undefined, none, "/p", null)).toBeNull();
  });

  it("takes --on (several servers, comma-separated) with [cluster]'s settings, and `local` over everything", () => {
    const withCluster = config([
      [
        "project",
        {
          cluster: {
            nats: "nats://a:4222",
            remote: "shared",
            on_worker_loss: "fail",
            heartbeat_timeout: "10s",
          },
        },
      ],
    ]);
    expect(resolveRemote(undefined, withCluster, "/p", null)).toMatchObject({
      servers: ["nats://a:4222"],
      git_remote: "shared",
      on_worker_loss: "fail",
      heartbeat_ms: 10_000,
      max_attempts: 3,
    });
    expect(resolveRemote("nats://b:1,tls://c:2", withCluster, "/p", null)?.servers).toEqual([
      "nats://b:1",
      "tls://c:2",
    ]);
    expect(resolveRemote("local", withCluster, "/p", null)).toBeNull();
  });

  it("keeps a remote parent's cluster for its children unless --on says otherwise", () => {
    const parent = resolveRemote("nats://parent:4222", none, "/p", null)!;
    expect(resolveRemote(undefined, none, "/p", parent)).toBe(parent);
    expect(resolveRemote("nats://other:4222", none, "/p", parent)?.servers).toEqual(["nats://other:4222"]);
  });

  it("resolves [cluster] retry with its defaults, and refuses an error code caesar never gives", () => {
    const nats = "nats://a:4222";
    expect(resolveRemote(undefined, config([["project", { cluster: { nats } }]]), "/p", null)?.retry).toEqual(
      {
        attempts: 3,
        backoff_ms: 10_000,
        on: ["rate_limited", "model_unreachable", "model_error"],
      },
    );
    const tuned = config([
      ["project", { cluster: { nats, retry: { attempts: 5, backoff: "1m", on: ["timed_out"] } } }],
    ]);
    expect(resolveRemote(undefined, tuned, "/p", null)?.retry).toEqual({
      attempts: 5,
      backoff_ms: 60_000,
      on: ["timed_out"],
    });
    const misspelt = config([["project", { cluster: { nats, retry: { on: ["rate_limit"] } } }]]);
    expect(() => resolveRemote(undefined, misspelt, "/p", null)).toThrow(
      expect.objectContaining({
        code: "config_invalid",
        message: expect.stringContaining("unknown error codes: rate_limit"),
      }),
    );
  });

  it("refuses URLs that are not NATS, and credentials written into a URL", () => {
    expect(() => resolveRemote("http://a:4222", none, "/p", null)).toThrow(/not nats:\/\/ or tls:\/\//);
    expect(() => resolveRemote("nats://user:secret@a:4222", none, "/p", null)).toThrow(
      expect.objectContaining({ code: "nats_credentials_in_url" }),
    );
  });

  it("reads credential files relative to the layer that names them, and ~ as the home directory", () => {
    const remote = resolveRemote(
      "nats://a:4222",
      config([
        ["global", { cluster: { credentials: "caesar.creds", tls_ca: "~/ca.pem" } }],
        ["project", { cluster: { token_file: "secrets/token" } }],
      ]),
      "/p",
      null,
      { XDG_CONFIG_HOME: "/xdg" },
    )!;
    expect(remote.credentials).toBe("/xdg/caesar/caesar.creds");
    expect(remote.tls_ca).toBe(join(homedir(), "ca.pem"));
    expect(remote.token_file).toBe("/p/secrets/token");
  });
});

describe("a remote plan", () => {
  it("runs in a worktree from the commit of now, and refuses in place or outside git before anything exists", async () => {
    const root = makeRepo();
    writeConfig(root, "", ["writer"]);
    const head = git(root, "rev-parse", "HEAD");
    const { plan } = await resolvePlan(
      parseDelegationRequest({
        objective: "x",
        agent: "writer",
        mode: "read-only",
        on: "nats://127.0.0.1:4222",
      }),
      { root },
    );
    expect(plan).toMatchObject({
      isolation: "worktree",
      base_commit: head,
      remote: { servers: ["nats://127.0.0.1:4222"] },
    });
    await expect(
      resolvePlan(
        parseDelegationRequest({
          objective: "x",
          agent: "writer",
          isolation: "inplace",
          on: "nats://127.0.0.1:4222",
        }),
        { root },
      ),
    ).rejects.toMatchObject({ code: "remote_inplace" });
    const bare = tempDir();
    await expect(
      resolvePlan(
        parseDelegationRequest({ objective: "x", agent: "reference", on: "nats://127.0.0.1:4222" }),
        { root: bare },
      ),
    ).rejects.toMatchObject({ code: "remote_needs_git" });
  });

  it("needs no agent installed here to pick a role's agent for other machines", async () => {
    const root = makeRepo();
    writeConfig(
      root,
      '[[role]]\nname = "far"\nagents = ["nowhere-here"]\n\n[[agent]]\nid = "nowhere-here"\nbin = "/no/such/bin"\n',
    );
    await expect(
      resolvePlan(parseDelegationRequest({ objective: "x", role: "far", on: "local" }), { root }),
    ).rejects.toMatchObject({
      code: "role_no_agent",
    });
    const { plan } = await resolvePlan(
      parseDelegationRequest({ objective: "x", role: "far", on: "nats://127.0.0.1:4222" }),
      { root },
    );
    expect(plan.agent).toBe("nowhere-here");
  });
});
