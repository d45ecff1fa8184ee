import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { FIXTURE_BIN, makeRepo, tempDir, writeFiles } from "./repo.js";

/** A 1×1 PNG, in base64: an image an editor's user pastes into a prompt. */
export const PIXEL =
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";

/** The scripted ACP agent (`test/fixtures/bin/acp-agent.mjs`, built on the SDK's agent side). */
export const ACP_FIXTURE = join(FIXTURE_BIN, "acp-agent.mjs");

export interface AcpFixtureProject {
  root: string;
  /** Where the fixture logs what it received (initialize, session/new, prompts, cancels, outcomes…). */
  log: string;
  /** A directory outside the repository (for paths the agent must not reach). */
  outside: string;
  received(): { event: string; [key: string]: unknown }[];
}

/**
 * A repository whose `.caesar/config.toml` declares `[[agent]] id = "fixture-acp"`, `protocol = "acp"`,
 * playing the given script. The script may use `{{root}}` and `{{outside}}`; `{{workspace}}` is left for
 * the agent's session (its cwd).
 */
export function makeAcpProject(script: unknown[], config = ""): AcpFixtureProject {
  const root = makeRepo({ "README.md": "# acp\n", "src/app.txt": "v1\n" });
  const outside = tempDir("caesar-acp-outside-");
  const log = join(outside, "fixture.log");
  const scriptFile = join(outside, "script.json");
  writeFileSync(
    scriptFile,
    JSON.stringify(script).replaceAll("{{root}}", root).replaceAll("{{outside}}", outside),
  );
  const toml = (value: string) => JSON.stringify(value);
  writeFiles(root, {
    ".caesar/config.toml": [
      // The fixture reads its script and writes its log outside the repository, which caesar's OS sandbox
      // hides (a private /tmp): the ACP suites test caesar's ACP client, so the agent runs unsandboxed.
      '[sandbox]\nmode = "off"',
      config,
      "[[agent]]",
      'id = "fixture-acp"',
      'protocol = "acp"',
      `bin = ${toml(process.execPath)}`,
      `args = [${toml(ACP_FIXTURE)}]`,
      `env = { ACP_FIXTURE_SCRIPT_FILE = ${toml(scriptFile)}, ACP_FIXTURE_LOG = ${toml(log)} }`,
      "",
    ].join("\n"),
  });
  return {
    root,
    log,
    outside,
    received: () =>
      existsSync(log)
        ? readFileSync(log, "utf8")
            .split("\n")
            .filter(Boolean)
            .map((line) => JSON.parse(line) as { event: string })
        : [],
  };
}

/** An agent message carrying a successful caesar report in a fenced block, as the fixture agent says it. */
export function reportMessage(summary: string): string {
  const report = JSON.stringify({ protocol: "caesar.report/v1", status: "success", summary });
  return `Done.\n\n\`\`\`json caesar:report\n${report}\n\`\`\``;
}
