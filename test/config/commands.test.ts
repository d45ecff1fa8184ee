import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { probeBwrap } from "../../src/sandbox/bwrap.js";
import { parseJsonOutput, runCaesar } from "../helpers/cli.js";
import { FIXTURE_BIN, makeRepo, tempDir, writeFiles } from "../helpers/repo.js";

function env(home: string) {
  return { XDG_CONFIG_HOME: join(home, "xdg"), HOME: home };
}

describe("layered configuration from the command line", () => {
  it("policy show gives each value's provenance across the three layers", async () => {
    const root = makeRepo();
    const home = tempDir();
    writeFiles(home, { "xdg/caesar/config.toml": '[policy]\ntimeout = "1h"\nmax_parallel = 2\n' });
    writeFiles(root, {
      ".caesar/config.toml": "[policy]\nmax_parallel = 3\n",
      ".caesar/config.local.toml": "[policy]\nallow_inplace_write = true\n",
    });
    const result = await runCaesar(["policy", "show", "--json"], { cwd: root, env: env(home) });
    const body = parseJsonOutput<{ policy: Record<string, { value: unknown; source: string }> }>(result);
    expect(body.policy.timeout).toEqual({ value: "1h", source: "global" });
    expect(body.policy.max_parallel).toEqual({ value: 3, source: "project" });
    expect(body.policy.allow_inplace_write).toEqual({ value: true, source: "local" });
    expect(body.policy.mode).toEqual({ value: "write", source: "default" });
    const text = await runCaesar(["policy", "show"], { cwd: root, env: env(home) });
    expect(text.stdout).toMatch(/max_parallel\s+3\s+project/);
  });

  it("an unknown key names the file, the key and the closest valid key (exit 2)", async () => {
    const root = makeRepo();
    writeFiles(root, { ".caesar/config.toml": "[policy]\nmax_paralel = 3\n" });
    const result = await runCaesar(["policy", "show", "--json"], { cwd: root, env: env(tempDir()) });
    expect(result.code).toBe(2);
    const error = parseJsonOutput<{ error: { summary: string; detail: string } }>(result).error;
    expect(error.summary).toBe(`${join(root, ".caesar", "config.toml")} has 1 error.`);
    expect(error.detail).toBe('unknown key "policy.max_paralel" — did you mean "max_parallel"?');
  });

  it("policy deny of an agent nobody declared writes the rule but warns, with the closest known id", async () => {
    const root = makeRepo();
    const result = await runCaesar(["policy", "deny", "codx", "--json"], { cwd: root, env: env(tempDir()) });
    expect(result.code).toBe(0);
    expect(result.stderr).toContain(
      'caesar: warning: "codx" is not an agent caesar knows (did you mean "codex"?)',
    );
    expect(parseJsonOutput<{ known: boolean; warning: string }>(result)).toMatchObject({
      known: false,
      warning: expect.stringContaining("Known agents: "),
    });
    const known = await runCaesar(["policy", "deny", "codex"], { cwd: root, env: env(tempDir()) });
    expect(known.stderr).not.toContain("warning");
  });

  it("policy deny/allow write one layer, keep the user's comments, and refuse --global with --local", async () => {
    const root = makeRepo();
    const home = tempDir();
    const path = join(root, ".caesar", "config.toml");
    writeFiles(root, {
      ".caesar/config.toml": "# my settings\n[policy]\nmax_parallel = 2 # two is enough\n",
    });
    await runCaesar(["policy", "deny", "codex"], { cwd: root, env: env(home) });
    const afterDeny = readFileSync(path, "utf8");
    expect(afterDeny).toContain("# my settings");
    expect(afterDeny).toContain("max_parallel = 2 # two is enough");
    expect(afterDeny).toMatch(/denied = \[\s*"codex"\s*\]/);
    const allowed = await runCaesar(["policy", "allow", "codex", "--local", "--json"], {
      cwd: root,
      env: env(home),
    });
    expect(parseJsonOutput<{ allowed: boolean; layer: string }>(allowed)).toMatchObject({
      allowed: true,
      layer: "local",
    });
    expect(readFileSync(path, "utf8")).toBe(afterDeny); // the project layer is untouched
    expect(readFileSync(join(root, ".caesar", "config.local.toml"), "utf8")).toMatch(/denied = \[\s*\]/);
    const both = await runCaesar(["policy", "deny", "x", "--global", "--local", "--json"], {
      cwd: root,
      env: env(home),
    });
    expect(both.code).toBe(2);
    expect(parseJsonOutput<{ error: { code: string } }>(both).error.code).toBe("conflicting_layers");
  });

  it("agents add/disable/list/remove", async () => {
    const root = makeRepo();
    const home = tempDir();
    const add = await runCaesar(
      ["agents", "add", "mine", "--bin", "./mine.sh", "--arg", "--task", "--arg", "{{prompt}}"],
      { cwd: root, env: env(home) },
    );
    expect(add.code, add.stderr).toBe(0);
    const noPrompt = await runCaesar(["agents", "add", "bad", "--bin", "x", "--arg", "--yes", "--json"], {
      cwd: root,
      env: env(home),
    });
    expect(parseJsonOutput<{ error: { code: string } }>(noPrompt).error.code).toBe("config_missing_prompt");
    await runCaesar(["agents", "disable", "mine"], { cwd: root, env: env(home) });
    const list = parseJsonOutput<
      {
        id: string;
        kind: string;
        enabled: { value: boolean; source: string };
        admission: { allowed: boolean };
      }[]
    >(await runCaesar(["agents", "list", "--json"], { cwd: root, env: env(home) }));
    expect(list.find((a) => a.id === "mine")).toMatchObject({
      kind: "custom",
      enabled: { value: false, source: "project" },
      admission: { allowed: false },
    });
    expect(list.find((a) => a.id === "reference")).toMatchObject({
      enabled: { value: true, source: "default" },
    });
    const removed = await runCaesar(["agents", "remove", "mine"], { cwd: root, env: env(home) });
    expect(removed.code).toBe(0);
    expect(readFileSync(join(root, ".caesar", "config.toml"), "utf8")).not.toContain("mine");
    const unknown = await runCaesar(["agents", "disable", "codx", "--json"], { cwd: root, env: env(home) });
    expect(parseJsonOutput<{ error: { summary: string } }>(unknown).error.summary).toContain("Unknown agent");
  });

  it("agents add --protocol acp declares an ACP agent without a {{prompt}}, and refuses one", async () => {
    const root = makeRepo();
    const home = tempDir();
    const add = await runCaesar(
      ["agents", "add", "zed-like", "--protocol", "acp", "--bin", "my-acp", "--arg", "--acp"],
      {
        cwd: root,
        env: env(home),
      },
    );
    expect(add.code, add.stderr).toBe(0);
    const toml = readFileSync(join(root, ".caesar", "config.toml"), "utf8");
    expect(toml).toMatch(/protocol = "acp"/);
    expect(toml).toMatch(/args = \[\s*"--acp"\s*\]/);
    const list = parseJsonOutput<{ id: string; protocol: string }[]>(
      await runCaesar(["agents", "list", "--json"], { cwd: root, env: env(home) }),
    );
    expect(list.find((a) => a.id === "zed-like")?.protocol).toBe("acp");
    const withPrompt = await runCaesar(
      ["agents", "add", "bad-acp", "--protocol", "acp", "--bin", "x", "--arg", "{{prompt}}", "--json"],
      { cwd: root, env: env(home) },
    );
    expect(withPrompt.code).toBe(2);
    expect(parseJsonOutput<{ error: { code: string } }>(withPrompt).error.code).toBe("config_acp_prompt");
    expect(readFileSync(join(root, ".caesar", "config.toml"), "utf8")).toBe(toml); // nothing written
  });

  it("role add/show/remove, with provenance per field and the default roles", async () => {
    const root = makeRepo();
    const home = tempDir();
    const defaults = parseJsonOutput<{ name: string }[]>(
      await runCaesar(["role", "list", "--json"], { cwd: root, env: env(home) }),
    );
    expect(defaults.map((r) => r.name)).toEqual(["reviewer", "implementer", "investigator"]);
    await runCaesar(["role", "add", "reviewer", "--agents", "reference", "--timeout", "5m", "--local"], {
      cwd: root,
      env: env(home),
    });
    const shown = parseJsonOutput<{
      fields: Record<string, { value: unknown; source: string }>;
      picks: string;
    }>(await runCaesar(["role", "show", "reviewer", "--json"], { cwd: root, env: env(home) }));
    expect(shown.fields.agents).toEqual({ value: ["reference"], source: "local" });
    expect(shown.fields.mode).toEqual({ value: "read-only", source: "default" });
    expect(shown.picks).toBe("reference");
    const run = await runCaesar(["run", "--role", "reviewer", "--json", "create x containing y"], {
      cwd: root,
      env: env(home),
    });
    const body = parseJsonOutput<{ state: { agent: string; mode: string; role: string } }>(run);
    expect(body.state).toMatchObject({ agent: "reference", mode: "read-only", role: "reviewer" });
    const removeDefault = await runCaesar(["role", "remove", "implementer", "--json"], {
      cwd: root,
      env: env(home),
    });
    expect(parseJsonOutput<{ error: { detail: string } }>(removeDefault).error.detail).toContain(
      "default role",
    );
  });

  it("init creates, refreshes only what is derived, and keeps the user's edits", async () => {
    const root = makeRepo({ "package-lock.json": "{}", ".env": "A=1\n" });
    const home = tempDir();
    const first = await runCaesar(["init"], { cwd: root, env: env(home) });
    expect(first.code, first.stderr).toBe(0);
    const config = join(root, ".caesar", "config.toml");
    expect(readFileSync(config, "utf8")).toMatch(/^setup = \["npm ci"\]/m);
    expect(readFileSync(config, "utf8")).toMatch(/^copy = \["\.env"\]/m);
    expect(existsSync(join(root, ".caesar", "roles", "reviewer.md"))).toBe(true);
    const gitignore = readFileSync(join(root, ".gitignore"), "utf8");
    for (const line of [".caesar/config.local.toml", ".caesar/tasks/", ".caesar/wt/", ".caesar/state/"]) {
      expect(gitignore.split("\n").filter((l) => l === line)).toHaveLength(1);
    }
    // The user edits: keeps their own copy list (comment removed), tweaks a role prompt, adds a policy.
    const edited = readFileSync(config, "utf8")
      .replace(/^copy = .*$/m, 'copy = [".env", "secrets.json"]')
      .replace("[policy]", "[policy]\nmax_parallel = 2");
    writeFileSync(config, edited);
    writeFileSync(join(root, ".caesar", "roles", "reviewer.md"), "my prompt\n");
    writeFileSync(join(root, "pnpm-lock.yaml"), "lockfileVersion: 9\n");
    writeFileSync(join(root, "package-lock.json"), "{}"); // still there: pnpm's comes first
    await runCaesar(["init"], { cwd: root, env: env(home) });
    const after = readFileSync(config, "utf8");
    expect(after).toMatch(/^setup = \["pnpm install --frozen-lockfile"\]/m); // derived: refreshed
    expect(after).toContain('copy = [".env", "secrets.json"]'); // the user's: kept
    expect(after).toContain("max_parallel = 2");
    expect(readFileSync(join(root, ".caesar", "roles", "reviewer.md"), "utf8")).toBe("my prompt\n");
    expect(readFileSync(join(root, ".gitignore"), "utf8")).toBe(gitignore);
    await runCaesar(["init", "--force"], { cwd: root, env: env(home) });
    expect(readFileSync(`${config}.bak`, "utf8")).toBe(after);
  });

  it("doctor lists every agent with installation, capabilities, and the command that changes its admission", async () => {
    const root = makeRepo();
    const result = await runCaesar(["doctor"], { cwd: root, env: env(tempDir()) });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("reference — Reference agent (bundled) (builtin): installed");
    expect(result.stdout).toContain("change with `caesar policy deny reference`");
    // The reference agent cuts no network by itself; under the default OS sandbox, where one runs, the
    // kernel does (doctor-sandbox.test.ts).
    expect(result.stdout).toMatch(probeBwrap().available ? /network\s+proxied/ : /network\s+open/);
  });
});

describe("caesar agents test", () => {
  it("needs --yes, then runs a real read-only micro-task and says whether the agent works", async () => {
    const root = makeRepo();
    const home = tempDir();
    writeFiles(root, {
      ".caesar/config.toml": `[[agent]]\nid = "conformant"\nbin = "${join(FIXTURE_BIN, "conformant.sh")}"\n`,
    });
    const unconfirmed = await runCaesar(["agents", "test", "conformant", "--json"], {
      cwd: root,
      env: env(home),
    });
    expect(unconfirmed.code).toBe(2);
    expect(parseJsonOutput<{ error: { code: string } }>(unconfirmed).error.code).toBe("confirmation_needed");
    const result = await runCaesar(["agents", "test", "conformant", "--yes", "--json"], {
      cwd: root,
      env: env(home),
    });
    expect(result.code, result.stderr).toBe(0);
    const body = parseJsonOutput<{ ok: boolean; task_id: string; report: { status: string } }>(result);
    expect(body).toMatchObject({ ok: true, report: { status: "success" } });
    const state = JSON.parse(
      readFileSync(join(root, ".caesar", "tasks", body.task_id, "state.json"), "utf8"),
    );
    expect(state.mode).toBe("read-only");
  });
});
