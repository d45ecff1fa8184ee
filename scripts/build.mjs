#!/usr/bin/env node
// Build caesar into dist/: two entry points bundled with esbuild (the CLI, and the conductor that runs each
// task), sharing chunks. Bundling matters: every `caesar run` starts two Node processes, and loading one
// minified bundle instead of hundreds of modules is most of their start-up time. Type checking is
// `npm run typecheck` (tsc); this step only transpiles.
//
// Also bundled, for the browser: the dashboard's syntax highlighter (dist/web/highlight.js), so the web
// page needs no build step on the user's side — web/ itself is served as plain ES modules.
import { spawnSync } from "node:child_process";
import { mkdirSync, readFileSync, realpathSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { build } from "esbuild";

rmSync(new URL("../dist", import.meta.url), { recursive: true, force: true });
await build({
  // The CLI, the conductor, and the agent-chat library (importable by other tools and by test fixtures).
  entryPoints: ["src/cli/main.ts", "src/engine/conductor-main.ts", "src/chat/index.ts"],
  outbase: "src",
  outdir: "dist",
  bundle: true,
  splitting: true,
  format: "esm",
  platform: "node",
  target: "node20",
  packages: "bundle",
  minify: true,
  sourcemap: "linked",
  chunkNames: "chunks/[name]-[hash]",
  logLevel: "warning",
  // Some dependencies are CommonJS and call require(): give the ESM bundle one.
  banner: {
    js: "import { createRequire as __caesarCreateRequire } from 'node:module'; const require = __caesarCreateRequire(import.meta.url);",
  },
});
await build({
  entryPoints: { highlight: "scripts/highlight-entry.mjs" },
  outdir: "dist/web",
  bundle: true,
  format: "esm",
  platform: "browser",
  target: "es2022",
  minify: true,
  legalComments: "eof",
  logLevel: "warning",
});
await buildSnapshots();

/**
 * V8 startup snapshots of the CLI and the conductor (see src/support/startup-snapshot.ts): each a single
 * CommonJS bundle, evaluated once here by this very Node, its heap saved to dist/snapshot/<name>.blob.
 * Optional: when this Node cannot build them, caesar starts from the ES module bundles above.
 */
async function buildSnapshots() {
  const root = realpathSync(new URL("..", import.meta.url));
  const dir = join(root, "dist", "snapshot");
  mkdirSync(dir, { recursive: true });
  // V8 flags baked into the snapshots, passed again by whoever starts a process from them. --no-opt: no
  // optimising compiler. caesar's processes mostly wait on git and agents; TurboFan compiling their
  // start-up code costs each of them ≈ 4 MiB of memory and some CPU. The price, measured: translating and
  // validating an agent's stream runs ≈ 1.4× slower (≈ 70 µs a line instead of 50).
  const flags = ["--no-opt"];
  for (const [name, entry] of [
    ["cli", "src/cli/cli-snapshot.ts"],
    ["conductor", "src/engine/conductor-snapshot.ts"],
  ]) {
    const bundle = join(dir, `${name}.cjs`);
    await build({
      entryPoints: [entry],
      outfile: bundle,
      bundle: true,
      format: "cjs",
      platform: "node",
      target: "node20",
      packages: "bundle",
      minify: true,
      logLevel: "warning",
      // package-paths.ts locates the package from its module URL: two folders below the root, like dist/snapshot/.
      define: { "import.meta.url": JSON.stringify(pathToFileURL(bundle).href) },
    });
    // Code run from a snapshot cannot import() at run time (Node has no module loader for it there).
    const dynamicImport = /\bimport\(\s*["'`]/.exec(readFileSync(bundle, "utf8"));
    if (dynamicImport)
      throw new Error(
        `${bundle}: a dynamic import() survived bundling (${dynamicImport[0]}…); a snapshot cannot run it`,
      );
    const blob = join(dir, `${name}.blob`);
    const temp = `${blob}.${process.pid}.tmp`;
    const made = spawnSync(
      process.execPath,
      [...flags, "--snapshot-blob", temp, "--build-snapshot", bundle],
      {
        cwd: dir,
        encoding: "utf8",
        env: { PATH: process.env.PATH ?? "" },
      },
    );
    if (made.status !== 0) {
      rmSync(temp, { force: true });
      process.stderr.write(
        `build: no startup snapshot for ${name} (caesar will start from its ES modules, more slowly):\n${made.stderr}\n`,
      );
      return;
    }
    renameSync(temp, blob);
  }
  const quote = (text) => `'${text.replaceAll("'", "'\\''")}'`;
  const execPath = realpathSync(process.execPath);
  // For bin/caesar (a shell script): what the CLI snapshot needs to match.
  writeFileSync(
    join(dir, "launch.sh"),
    `snapshot_root=${quote(root)}\nsnapshot_node=${quote(execPath)}\nsnapshot_flags=${quote(flags.join(" "))}\n`,
  );
  // Last, so that a build that stopped half way leaves no claim of usable snapshots.
  const meta = {
    version: 1,
    node: process.version,
    v8: process.versions.v8,
    arch: process.arch,
    platform: process.platform,
    execPath,
    execMtimeMs: statSync(execPath).mtimeMs,
    packageRoot: root,
    flags,
    sizes: Object.fromEntries(
      ["cli", "conductor"].map((name) => [name, statSync(join(dir, `${name}.blob`)).size]),
    ),
  };
  writeFileSync(join(dir, "meta.json"), `${JSON.stringify(meta, null, 2)}\n`);
}
