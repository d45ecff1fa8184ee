import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { CAESAR_BIN, parseJsonOutput, runCaesar } from "../helpers/cli.js";
import { tempDir } from "../helpers/repo.js";

describe("caesar mock-model", () => {
  it("--print-env codex prepares a codex home with a provider and prints what to eval", async () => {
    const state = tempDir("caesar-mock-env-");
    const result = await runCaesar([
      "mock-model",
      "--print-env",
      "codex",
      "--port",
      "18555",
      "--state-dir",
      state,
    ]);
    expect(result.code, result.stderr).toBe(0);
    const home = join(state, "codex-home");
    expect(result.stdout).toContain(`export CODEX_HOME='${home}'`);
    expect(result.stdout).toContain("export CAESAR_MOCK_API_KEY=");
    const config = readFileSync(join(home, "config.toml"), "utf8");
    expect(config).toContain('base_url = "http://127.0.0.1:18555/v1"');
    expect(config).toContain('wire_api = "responses"');
    // The output is valid shell: eval it and read a variable back.
    const shell = spawn("bash", ["-c", `eval "$1"; printf %s "$CODEX_HOME"`, "_", result.stdout]);
    let echoed = "";
    shell.stdout.on("data", (chunk) => {
      echoed += chunk;
    });
    await new Promise((resolve) => shell.on("close", resolve));
    expect(echoed).toBe(home);
  });

  it("--print-env all --json gives every CLI's variables; gemini gets its settings file", async () => {
    const state = tempDir("caesar-mock-env-");
    const result = await runCaesar([
      "mock-model",
      "--print-env",
      "all",
      "--port",
      "18556",
      "--state-dir",
      state,
      "--json",
    ]);
    const body = parseJsonOutput<{ url: string; env: Record<string, string>; files: string[] }>(result);
    expect(body.url).toBe("http://127.0.0.1:18556");
    expect(Object.keys(body.env)).toEqual(
      expect.arrayContaining([
        "CODEX_HOME",
        "ANTHROPIC_BASE_URL",
        "OPENCODE_CONFIG_CONTENT",
        "GEMINI_CLI_HOME",
        "COPILOT_PROVIDER_BASE_URL",
      ]),
    );
    const settings = body.files.find((file) => file.endsWith("settings.json"))!;
    expect(JSON.parse(readFileSync(settings, "utf8")).security.auth.selectedType).toBe("gemini-api-key");
  });

  it("refuses an agent it cannot serve, naming the ones it can (usage error)", async () => {
    const result = await runCaesar(["mock-model", "--print-env", "agy", "--json"]);
    expect(result.code).toBe(2);
    const body = parseJsonOutput<{ error: { code: string; detail: string } }>(result);
    expect(body.error.code).toBe("unknown_mock_agent");
    expect(body.error.detail).toContain("codex, claude, opencode, gemini, copilot");
  });

  it("lists its built-in scenarios", async () => {
    const body = parseJsonOutput<{ name: string }[]>(await runCaesar(["mock-model", "--list", "--json"]));
    expect(body.map((s) => s.name)).toEqual(expect.arrayContaining(["hello", "channel", "fail-401", "hang"]));
  });

  it("serves until SIGTERM, logging each request to --log", async () => {
    const log = join(tempDir("caesar-mock-log-"), "requests.jsonl");
    const child = spawn(process.execPath, [CAESAR_BIN, "mock-model", "--port", "0", "--json", "--log", log]);
    const url = await new Promise<string>((resolve, reject) => {
      let out = "";
      child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
        out += chunk;
        try {
          resolve((JSON.parse(out) as { url: string }).url);
        } catch {
          // not complete yet
        }
      });
      child.on("close", () => reject(new Error(`exited before listening: ${out}`)));
    });
    const models = await fetch(`${url}/v1/models`);
    expect(models.status).toBe(200);
    const exited = new Promise<number | null>((resolve) => child.on("close", resolve));
    child.kill("SIGTERM");
    expect(await exited).toBe(0);
    expect(existsSync(log)).toBe(true);
    expect(JSON.parse(readFileSync(log, "utf8").split("\n")[0]!)).toMatchObject({
      method: "GET",
      status: 200,
    });
  });
});
