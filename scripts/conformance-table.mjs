#!/usr/bin/env node
// Regenerate the table of docs/conformance.md that says which agents pass which OACP level: runs
// `caesar conformance <agent> --level extended --json` for the reference agent and every built-in CLI,
// the CLIs being the versions pinned in test/agent-clis (`npm ci --prefix test/agent-clis`), each pointed
// at `caesar mock-model` with a home of its own. A CLI that is not installed, or that the kit cannot drive,
// gets a row that says so; its last measured row is not kept.
//
//   npm run build && node scripts/conformance-table.mjs          rewrite the table in docs/conformance.md
//   node scripts/conformance-table.mjs codex claude              only these agents (the others' rows stay)
//
// Sequential on purpose: each run is six tasks, and a CLI with its model is a heavy process.
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const CAESAR = join(ROOT, "bin", "caesar.js");
const CLI_BIN = join(ROOT, "test", "agent-clis", "node_modules", ".bin");
const DOC = join(ROOT, "docs", "conformance.md");
const START = "<!-- conformance-table:start -->";
const END = "<!-- conformance-table:end -->";

/** The agents of the table, in its order; `cli` is the program whose version the row names. */
const AGENTS = [
  { id: "reference", cli: undefined },
  // The docs' ten-line bash agent (README, "Your own agent"), checked as any author checks theirs.
  { id: "seed-agent.sh", cli: undefined, bin: join(ROOT, "test", "fixtures", "bin", "seed-agent.sh") },
  { id: "codex", cli: "codex" },
  { id: "claude", cli: "claude" },
  { id: "opencode", cli: "opencode" },
  { id: "gemini", cli: "gemini" },
  { id: "copilot", cli: "copilot" },
  // Their ACP modes: caesar drives a session instead of reading a stream.
  { id: "codex-acp", cli: "codex-acp", pkg: "@zed-industries/codex-acp" },
  { id: "claude-acp", cli: "claude-agent-acp", pkg: "@zed-industries/claude-agent-acp" },
  { id: "opencode-acp", cli: "opencode" },
  { id: "gemini-acp", cli: "gemini" },
  { id: "copilot-acp", cli: "copilot" },
];

function versionOf({ cli, pkg }, env) {
  if (!cli) return "—";
  // An ACP adapter answers only ACP: its version is its package's.
  if (pkg) {
    const manifest = join(ROOT, "test", "agent-clis", "node_modules", pkg, "package.json");
    return existsSync(join(CLI_BIN, cli)) && existsSync(manifest)
      ? JSON.parse(readFileSync(manifest, "utf8")).version
      : undefined;
  }
  const run = spawnSync(join(CLI_BIN, cli), ["--version"], { encoding: "utf8", env, timeout: 60_000 });
  if (run.status !== 0) return undefined;
  return (run.stdout.match(/\d+\.\d+\.\d+/) ?? [run.stdout.trim()])[0];
}

function measure(agent) {
  // A home of its own: no configuration or login of this machine's user reaches the CLI.
  const home = mkdtempSync(join(tmpdir(), "caesar-conformance-home-"));
  const env = {
    ...process.env,
    PATH: `${CLI_BIN}:${process.env.PATH ?? "/usr/bin:/bin"}`,
    HOME: home,
    XDG_CONFIG_HOME: join(home, ".config"),
    XDG_DATA_HOME: join(home, ".local/share"),
    XDG_STATE_HOME: join(home, ".local/state"),
    // The kit keeps CLI homes under the cache, outside the temp directory (codex needs that).
    XDG_CACHE_HOME: join(homedir(), ".cache"),
    NO_COLOR: "1",
  };
  try {
    const version = versionOf(agent, env);
    if (version === undefined) return { ...agent, version: "—", note: "not installed here" };
    process.stderr.write(`conformance ${agent.id} (${version})…\n`);
    const subject = agent.bin ? ["--bin", agent.bin] : [agent.id];
    const run = spawnSync(CAESAR, ["conformance", ...subject, "--level", "extended", "--json"], {
      encoding: "utf8",
      env,
      cwd: home,
      timeout: 15 * 60_000,
    });
    let card;
    try {
      card = JSON.parse(run.stdout);
    } catch {
      const why = (run.stderr || run.stdout || `exit ${run.status}`).trim().split("\n").pop();
      return { ...agent, version, note: `the kit could not drive it: ${why}` };
    }
    if (card.error) return { ...agent, version, note: `the kit could not drive it: ${card.error.summary}` };
    return { ...agent, version, card };
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
}

function verdict(card, level) {
  const judged = card.levels[level];
  if (!judged) return "—";
  return judged.passed ? "pass" : `fail (${judged.failed.join(", ")})`;
}

function rowOf(result) {
  if (!result.card) return [result.id, result.version, "—", "—", result.note];
  const skipped = result.card.requirements
    .filter((requirement) => requirement.verdict === "skip")
    .map((requirement) => `${requirement.id}: ${requirement.note}`);
  return [
    result.id,
    result.version,
    verdict(result.card, "core"),
    verdict(result.card, "extended"),
    skipped.join("; ") || "—",
  ];
}

/** A markdown table with its columns padded, as the formatter (biome) writes it. */
function formatTable(header, rows) {
  const widths = header.map((_, i) => Math.max(...[header, ...rows].map((row) => [...row[i]].length)));
  const line = (cells) =>
    `| ${cells.map((cell, i) => cell + " ".repeat(widths[i] - [...cell].length)).join(" | ")} |`;
  return [line(header), line(widths.map((width) => "-".repeat(width))), ...rows.map(line)];
}

function previousRows(doc) {
  const rows = new Map();
  const table = doc.slice(doc.indexOf(START), doc.indexOf(END));
  for (const line of table.split("\n")) {
    const cells = line
      .split("|")
      .slice(1, -1)
      .map((cell) => cell.trim());
    if (cells.length === 5 && cells[0] !== "agent" && !/^-+$/.test(cells[0])) rows.set(cells[0], cells);
  }
  return rows;
}

const wanted = process.argv.slice(2);
const doc = readFileSync(DOC, "utf8");
if (!doc.includes(START) || !doc.includes(END)) {
  process.stderr.write(`${DOC} has no ${START} … ${END} block.\n`);
  process.exit(1);
}
if (!existsSync(join(ROOT, "dist", "cli", "main.js"))) {
  process.stderr.write("dist/ is missing: run npm run build first.\n");
  process.exit(1);
}
const previous = previousRows(doc);
const rows = AGENTS.map((agent) => {
  if (wanted.length > 0 && !wanted.includes(agent.id))
    return previous.get(agent.id) ?? rowOf({ ...agent, version: "—", note: "not measured" });
  return rowOf(measure(agent));
});
const day = new Date().toISOString().slice(0, 10);
const table = [
  START,
  `Measured ${day} by \`node scripts/conformance-table.mjs\` (Node ${process.versions.node}, the CLIs pinned in test/agent-clis, each against \`caesar mock-model\`).`,
  "",
  ...formatTable(["agent", "version", "core", "extended", "not checked"], rows),
  END,
].join("\n");
writeFileSync(DOC, doc.slice(0, doc.indexOf(START)) + table + doc.slice(doc.indexOf(END) + END.length));
process.stderr.write(`${DOC}: ${rows.length} rows.\n`);
