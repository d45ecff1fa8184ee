import { describe, expect, it } from "vitest";
import { parseJsonOutput, runCaesar } from "../helpers/cli.js";
import { makeRepo, tempDir } from "../helpers/repo.js";

// `caesar doctor` says, per agent, what its CLI may write under caesar's OS sandbox.

interface DoctorJson {
  sandbox: { backend: string | null };
  agents: {
    id: string;
    sandbox: { home: string; variables: string[]; own: { value: string } } | null;
  }[];
}

interface EgressJson {
  sandbox: { backend: string | null; allow_hosts: string[] };
  agents: { id: string; model_hosts: string[] }[];
}

describe("caesar doctor: the sandbox per agent", () => {
  it("names each CLI's home of the task's and whether its own sandbox stays on; other agents get none", async () => {
    const root = makeRepo({ "README.md": "# x\n", ".caesar/config.toml": '[sandbox]\nmode = "auto"\n' });
    const env = { HOME: tempDir(), XDG_CONFIG_HOME: tempDir() };
    const json = parseJsonOutput<DoctorJson>(await runCaesar(["doctor", "--json"], { cwd: root, env }));
    const of = (id: string) => json.agents.find((agent) => agent.id === id)?.sandbox;
    expect(of("codex")).toMatchObject({ home: "runtime/codex-home", own: { value: "nested" } });
    expect(of("codex")?.variables).toContain("CODEX_HOME");
    expect(of("claude")).toMatchObject({ home: "runtime/claude-config", variables: ["CLAUDE_CONFIG_DIR"] });
    expect(of("gemini")).toMatchObject({ home: "runtime/gemini-home", variables: ["GEMINI_CLI_HOME"] });
    expect(of("opencode")).toMatchObject({ home: "runtime/opencode-home", own: { value: "none" } });
    expect(of("copilot")).toMatchObject({ home: "runtime/copilot-home", variables: ["COPILOT_HOME"] });
    expect(of("reference")).toBeNull();

    const text = await runCaesar(["doctor"], { cwd: root, env });
    expect(text.code).toBe(0);
    const writable = json.sandbox.backend ? "writable:" : "writable once caesar's sandbox runs:";
    expect(text.stdout).toContain(
      `sandbox      ${writable} its workspace (write tasks; a worktree's registration in git for its commits); its task directory; a private /tmp; <task dir>/runtime/codex-home (CODEX_HOME, TMPDIR=/tmp/.codex-tmp)`,
    );
    expect(text.stdout).toMatch(/own sandbox {2}nested +its bubblewrap runs inside caesar's/);
    // The reference agent cuts nothing by itself: under the sandbox the kernel does, and doctor says so.
    const reference = text.stdout.slice(text.stdout.indexOf("reference —"));
    if (json.sandbox.backend) {
      expect(reference).toMatch(
        /network {6}proxied +caesar's sandbox: only the hosts below, .*\(by itself: open,/,
      );
      expect(reference).toMatch(
        /read-only {4}os +caesar's sandbox: the kernel refuses .*\(by itself: policy,/,
      );
    } else expect(reference).toMatch(/network {6}open +a plain Node process/);
    const off = await runCaesar(["doctor"], {
      cwd: makeRepo({ "README.md": "# x\n", ".caesar/config.toml": '[sandbox]\nmode = "off"\n' }),
      env,
    });
    expect(off.stdout.slice(off.stdout.indexOf("reference —"))).toMatch(
      /network {6}open +a plain Node process/,
    );
  });

  it("says what each agent reaches through the egress proxy: its model's hosts, its base URL's, allow_hosts", async () => {
    const root = makeRepo({
      "README.md": "# x\n",
      ".caesar/config.toml":
        '[sandbox]\nmode = "auto"\nallow_hosts = ["registry.npmjs.org", "*.corp.example"]\n',
    });
    const env = {
      HOME: tempDir(),
      XDG_CONFIG_HOME: tempDir(),
      ANTHROPIC_BASE_URL: "http://127.0.0.1:11434",
    };
    const json = parseJsonOutput<EgressJson>(await runCaesar(["doctor", "--json"], { cwd: root, env }));
    expect(json.sandbox.allow_hosts).toEqual(["registry.npmjs.org", "*.corp.example"]);
    const hosts = (id: string) => json.agents.find((agent) => agent.id === id)?.model_hosts;
    expect(hosts("claude")).toEqual(expect.arrayContaining(["api.anthropic.com", "127.0.0.1:11434"]));
    expect(hosts("claude-acp")).toEqual(hosts("claude"));
    expect(hosts("codex")).toContain("api.openai.com");
    expect(hosts("reference")).toEqual([]);

    const text = await runCaesar(["doctor"], { cwd: root, env });
    expect(text.stdout).toMatch(
      /reaches {6}api\.anthropic\.com, .*127\.0\.0\.1:11434 \(its model, even with the network off\)/,
    );
    if (json.sandbox.backend)
      expect(text.stdout).toMatch(
        /network {3}no network of the host's .*\[sandbox\] allow_hosts \(project\): registry\.npmjs\.org, \*\.corp\.example/,
      );
  });
});

describe("caesar doctor: masked keys", () => {
  it("names the keys a sandboxed agent would hold a placeholder of, never their values; mask_keys = false says they are readable", async () => {
    const env = {
      HOME: tempDir(),
      XDG_CONFIG_HOME: tempDir(),
      ANTHROPIC_API_KEY: "sk-ant-doctor-secret",
      OPENAI_API_KEY: "sk-openai-doctor-secret",
    };
    const root = makeRepo({ "README.md": "# x\n", ".caesar/config.toml": '[sandbox]\nmode = "auto"\n' });
    const json = parseJsonOutput<{ agents: { id: string; masked_keys: string[] }[] }>(
      await runCaesar(["doctor", "--json"], { cwd: root, env }),
    );
    const masked = (id: string) => json.agents.find((agent) => agent.id === id)?.masked_keys;
    expect(masked("claude")).toEqual(["ANTHROPIC_API_KEY"]);
    expect(masked("claude-acp")).toEqual(["ANTHROPIC_API_KEY"]);
    // codex's provider address is in its config.toml: its key is not masked, and doctor does not say it is.
    expect(masked("codex")).toEqual([]);
    const text = await runCaesar(["doctor"], { cwd: root, env });
    const claude = text.stdout.slice(text.stdout.indexOf("claude —"));
    expect(claude).toMatch(/keys {9}masked +ANTHROPIC_API_KEY: a placeholder inside/);
    expect(`${text.stdout}${JSON.stringify(json)}`).not.toContain("doctor-secret");

    const off = makeRepo({
      "README.md": "# x\n",
      ".caesar/config.toml": '[sandbox]\nmode = "auto"\nmask_keys = false\n',
    });
    const readable = await runCaesar(["doctor"], { cwd: off, env });
    expect(readable.stdout).toMatch(
      /keys {9}readable +ANTHROPIC_API_KEY: in its environment \(\[sandbox\] mask_keys = false\)/,
    );
  });
});

describe("caesar doctor: the machine's proxy", () => {
  it("names the proxy the egress proxy chains, and a variable it cannot use — never a password", async () => {
    const root = makeRepo({ "README.md": "# x\n", ".caesar/config.toml": '[sandbox]\nmode = "auto"\n' });
    const env = {
      HOME: tempDir(),
      XDG_CONFIG_HOME: tempDir(),
      HTTPS_PROXY: "http://jane:hunter2@gw.corp.example:3128",
      HTTP_PROXY: "https://jane:hunter2@gw.corp.example:443",
      NO_PROXY: ".corp.example",
    };
    const result = await runCaesar(["doctor", "--json"], { cwd: root, env });
    const json = parseJsonOutput<{ sandbox: { backend: string | null; upstream_proxy: unknown } }>(result);
    expect(json.sandbox.upstream_proxy).toEqual({
      tunnels: "HTTPS_PROXY (gw.corp.example:3128)",
      requests: null,
      problems: [expect.stringContaining("HTTP_PROXY names an https:// proxy (gw.corp.example)")],
    });
    const text = await runCaesar(["doctor"], { cwd: root, env });
    if (json.sandbox.backend) {
      expect(text.stdout).toContain(
        "through the machine's proxy — tunnels through HTTPS_PROXY (gw.corp.example:3128), plain http through none (directly)",
      );
      expect(text.stdout).toContain("WARNING: HTTP_PROXY names an https:// proxy");
    }
    expect(`${result.stdout}${text.stdout}${text.stderr}`).not.toContain("hunter2");
  });
});
