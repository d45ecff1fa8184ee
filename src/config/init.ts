import { existsSync } from "node:fs";
import { copyFile, mkdir, readFile, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { writeFileAtomic } from "../support/atomic-file.js";
import { DEFAULT_ROLE_PROMPTS } from "./default-roles.js";
import { layerPaths } from "./effective.js";
import { parseConfigText } from "./load.js";

export const DERIVED_MARK = "# derived by caesar init: remove this comment to keep your own value";

/** Lock files and the command that installs from them; the first JavaScript one found wins. */
const LOCKFILE_SETUP: { file: string; command: string; js?: true }[] = [
  { file: "pnpm-lock.yaml", command: "pnpm install --frozen-lockfile", js: true },
  { file: "yarn.lock", command: "yarn install --frozen-lockfile", js: true },
  { file: "bun.lock", command: "bun install --frozen-lockfile", js: true },
  { file: "bun.lockb", command: "bun install --frozen-lockfile", js: true },
  { file: "package-lock.json", command: "npm ci", js: true },
  { file: "uv.lock", command: "uv sync --frozen" },
  { file: "poetry.lock", command: "poetry install --no-root" },
  { file: "Pipfile.lock", command: "pipenv sync" },
  { file: "Cargo.lock", command: "cargo fetch" },
  { file: "go.sum", command: "go mod download" },
  { file: "Gemfile.lock", command: "bundle install" },
];
const COPIED_FILES = [".env", ".env.local"];
export const GITIGNORE_LINES = [
  ".caesar/config.local.toml",
  ".caesar/tasks/",
  ".caesar/wt/",
  ".caesar/state/",
];

/** What `[worktree]` should say for this project, from what is in it. */
export function deriveWorktree(root: string): { setup: string[]; copy: string[] } {
  const setup: string[] = [];
  let javascript = false;
  for (const { file, command, js } of LOCKFILE_SETUP) {
    if (!existsSync(join(root, file)) || (js && javascript)) continue;
    javascript ||= js === true;
    setup.push(command);
  }
  return { setup, copy: COPIED_FILES.filter((file) => existsSync(join(root, file))) };
}

function derivedLine(key: "setup" | "copy", values: string[]): string {
  return `${key} = ${JSON.stringify(values)}  ${DERIVED_MARK}`;
}

function projectTemplate(derived: { setup: string[]; copy: string[] }): string {
  const worktree = [
    "[worktree]",
    derived.setup.length > 0
      ? derivedLine("setup", derived.setup)
      : '# setup = ["npm ci"]        # run in each new worktree before the agent',
    derived.copy.length > 0
      ? derivedLine("copy", derived.copy)
      : '# copy = [".env"]            # copied into each worktree',
    '# link = ["node_modules"]    # symlinked into each worktree (shared, not isolated)',
  ];
  return [
    "# caesar configuration for this project (commit it). Personal overrides: .caesar/config.local.toml;",
    "# yours for every project: ~/.config/caesar/config.toml. `caesar policy show` shows what applies and why.",
    "",
    "[policy]",
    "# allowed = []               # agents that may run (empty: every agent not denied)",
    "# denied = []",
    "# max_parallel = 4           # tasks running at once, across every process",
    '# mode = "write"             # default mode: "read-only" | "write"',
    '# isolation = "auto"         # "auto" | "inplace" | "worktree"',
    '# network = "auto"           # "auto" | "on" | "off"',
    '# timeout = "30m"',
    "# allow_inplace_write = false",
    "# allow_recursion = false    # may an agent delegate to the same agent product (claude → claude)?",
    "# max_depth = 3              # hops from the main agent (1: its tasks may not delegate)",
    "# max_tasks_per_hour = 20    # per delegation tree (0: none)",
    "# max_cost_per_day = 5.0     # USD per delegation tree, from reported usage (0: none)",
    "# max_actions_per_hour = 500 # agents' tool calls per delegation tree (unset: unlimited; 0: none)",
    "",
    ...worktree,
    "",
    "# Commands caesar runs in each task's worktree after its agent; each must pass (docs/checks.md):",
    "# [checks]",
    '# default = ["npm test"]',
    '# timeout = "10m"            # each check\'s deadline',
    "# attempts = 1               # more: the agent gets another turn with the failing output",
    "",
    "# Let agents delegate to agents of the same risk profile:",
    "# [risk_profiles.default]",
    '# delegation_policy = { mode = "allow" }',
    "",
    "# Your own agent: any program that reads $CAESAR_TASK_FILE and writes $CAESAR_REPORT_PATH.",
    "# [[agent]]",
    '# id = "my-agent"',
    '# bin = "./my-agent.sh"',
    '# args = ["{{prompt}}"]',
    "",
  ].join("\n");
}

const GLOBAL_TEMPLATE = [
  "# caesar: your configuration for every project. A project's .caesar/config.toml overrides it, key by key.",
  "",
  "[policy]",
  "# denied = []",
  "# max_parallel = 4",
  '# timeout = "30m"',
  "",
  "# [models]",
  '# codex = "gpt-5.5"',
  "",
].join("\n");

/** Replace derived lines by what is derived now; add derived keys the file does not have at all. */
export function refreshDerived(text: string, derived: { setup: string[]; copy: string[] }): string {
  let next = text;
  for (const key of ["setup", "copy"] as const) {
    const markedLine = new RegExp(`^${key}\\s*=.*${escapeRegExp(DERIVED_MARK)}\\s*$`, "m");
    const anyLine = new RegExp(`^\\s*${key}\\s*=`, "m");
    if (markedLine.test(next)) {
      next =
        derived[key].length > 0
          ? next.replace(markedLine, derivedLine(key, derived[key]))
          : next.replace(new RegExp(`${markedLine.source}\\n?`, "m"), "");
    } else if (!anyLine.test(sectionBody(next, "worktree")) && derived[key].length > 0) {
      next = /^\[worktree\]\s*$/m.test(next)
        ? next.replace(/^\[worktree\]\s*$/m, `[worktree]\n${derivedLine(key, derived[key])}`)
        : `${next.replace(/\n*$/, "\n")}\n[worktree]\n${derivedLine(key, derived[key])}\n`;
    }
  }
  return next;
}

function sectionBody(text: string, section: string): string {
  const start = text.search(new RegExp(`^\\[${section}\\]\\s*$`, "m"));
  if (start === -1) return "";
  const rest = text.slice(start).split("\n").slice(1);
  const end = rest.findIndex((line) => /^\s*\[/.test(line));
  return (end === -1 ? rest : rest.slice(0, end)).join("\n");
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

export interface InitResult {
  actions: string[];
}

/** `caesar init`: create the layer and what goes with it; a re-run refreshes what is derived only. */
export async function initProject(
  root: string,
  options: { force: boolean; env?: NodeJS.ProcessEnv },
): Promise<InitResult> {
  const actions: string[] = [];
  const path = layerPaths(root, options.env).project;
  await mkdir(dirname(path), { recursive: true });
  const derived = deriveWorktree(root);
  if (!existsSync(path) || options.force) {
    if (existsSync(path)) {
      await copyFile(path, `${path}.bak`);
      actions.push(`backed up ${path} to ${path}.bak`);
    }
    await writeFileAtomic(path, projectTemplate(derived), { shared: true });
    actions.push(`wrote ${path}`);
  } else {
    const text = await readFile(path, "utf8");
    const next = refreshDerived(text, derived);
    parseConfigText(next, path);
    if (next !== text) {
      await writeFileAtomic(path, next, { shared: true });
      actions.push(`refreshed the derived [worktree] values in ${path}`);
    } else actions.push(`kept ${path} as it is`);
  }
  const rolesDir = join(root, ".caesar", "roles");
  await mkdir(rolesDir, { recursive: true });
  for (const [name, prompt] of Object.entries(DEFAULT_ROLE_PROMPTS)) {
    const file = join(rolesDir, `${name}.md`);
    if (existsSync(file) && !options.force) continue;
    await writeFile(file, prompt);
    actions.push(`wrote ${file}`);
  }
  const added = await ensureGitignore(root);
  if (added.length > 0) actions.push(`added to .gitignore: ${added.join(", ")}`);
  return { actions };
}

export async function initGlobal(options: { force: boolean; env?: NodeJS.ProcessEnv }): Promise<InitResult> {
  const path = layerPaths("/", options.env).global;
  if (existsSync(path) && !options.force) return { actions: [`kept ${path} as it is`] };
  await mkdir(dirname(path), { recursive: true });
  if (existsSync(path)) await copyFile(path, `${path}.bak`);
  await writeFileAtomic(path, GLOBAL_TEMPLATE, { shared: true });
  return { actions: [`wrote ${path}`] };
}

/** Add the lines caesar needs ignored to .gitignore, missing ones only, keeping the file as it was. */
export async function ensureGitignore(root: string): Promise<string[]> {
  const path = join(root, ".gitignore");
  const text = existsSync(path) ? await readFile(path, "utf8") : "";
  const present = new Set(text.split(/\r?\n/).map((line) => line.trim()));
  const missing = GITIGNORE_LINES.filter((line) => !present.has(line) && !present.has(`/${line}`));
  if (missing.length === 0) return [];
  const prefix = text === "" || text.endsWith("\n") ? text : `${text}\n`;
  await writeFileAtomic(path, `${prefix}${text === "" ? "" : "\n"}# caesar\n${missing.join("\n")}\n`, {
    shared: true,
  });
  return missing;
}
