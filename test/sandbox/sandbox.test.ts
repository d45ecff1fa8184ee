import { spawnSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { CAESAR_BIN, parseJsonOutput, runCaesar } from "../helpers/cli.js";
import { readJson, taskDir, tempDir, writeFiles } from "../helpers/repo.js";
import { itWith } from "../helpers/system-deps.js";
import { BUBBLEWRAP, project, type RunJson, run, tryWrite } from "./probe-project.js";

// Agents in an OS sandbox: each attack is tried by a real agent process under `[sandbox] mode =
// "required"`, and — where that shows the attack is real — the same agent with the sandbox off succeeds.

describe("agents in an OS sandbox (bubblewrap)", () => {
  itWith(
    BUBBLEWRAP,
    "a write task writes its worktree and its report, nothing of the user's, of caesar's or of other tasks",
    async () => {
      const home = tempDir("caesar-sandbox-home-");
      const other = tempDir("caesar-sandbox-other-");
      const script = tryWrite([
        "$PWD/agent.txt",
        "$ROOT/src/app.txt",
        "$ROOT/.git/config",
        "$ROOT/.git/caesar/tasks/forged.json",
        "$ROOT/.caesar/config.toml",
        `${home}/.bashrc`,
        `${other}/stolen.txt`,
        "$CAESAR_TASK_DIR/task.json",
        "$CAESAR_TASK_DIR/scratch.txt",
      ]);
      const sandboxed = project(script, "required");
      const result = await run(sandboxed, [], { ROOT: sandboxed, HOME: home });
      expect(result.state.outcome).toBe("succeeded");
      const wrote = result.raw.split("\n").filter((line) => line.startsWith("WROTE "));
      expect(wrote.map((line) => line.replace(/^WROTE .*\//, ""))).toEqual(["agent.txt", "scratch.txt"]);
      expect(readFileSync(join(sandboxed, "src/app.txt"), "utf8")).toBe("original\n");
      expect(readFileSync(join(sandboxed, ".git/config"), "utf8")).not.toContain("pwned");
      expect(existsSync(join(sandboxed, ".git/caesar/tasks/forged.json"))).toBe(false);
      expect(existsSync(join(home, ".bashrc"))).toBe(false);
      expect(existsSync(join(other, "stolen.txt"))).toBe(false);
      expect(readJson<{ id: string }>(join(taskDir(sandboxed, result.task_id), "task.json")).id).toBe(
        result.task_id,
      );
      expect(result.state.report.changes.map((change) => change.path)).toEqual(["agent.txt"]);

      // The same agent without the sandbox: the attacks are real.
      const open = project(script, "off");
      const unsandboxed = await run(open, [], { ROOT: open, HOME: home });
      expect(unsandboxed.raw).toContain(`WROTE ${open}/src/app.txt`);
      expect(existsSync(join(other, "stolen.txt"))).toBe(true);
    },
  );

  itWith(
    BUBBLEWRAP,
    "a read-only task cannot write its workspace whatever the command: shell, sed's abbreviated options, a script, links",
    async () => {
      const script = [
        tryWrite(["$PWD/src/app.txt", "$PWD/new.txt"]),
        `sed --in-pl='' 's/original/pwned/' src/app.txt 2>/dev/null && echo "WROTE sed" || echo "DENIED sed"`,
        `sort --outp=src/app.txt src/app.txt 2>/dev/null && echo "WROTE sort" || echo "DENIED sort"`,
        `node -e 'require("fs").writeFileSync("src/app.txt","pwned")' 2>/dev/null && echo "WROTE node" || echo "DENIED node"`,
        `ln -s "$PWD/src/app.txt" "$CAESAR_TASK_DIR/link" && (echo pwned > "$CAESAR_TASK_DIR/link") 2>/dev/null && echo "WROTE symlink" || echo "DENIED symlink"`,
        `ln "$PWD/src/app.txt" "$CAESAR_TASK_DIR/hard" 2>/dev/null && (echo pwned > "$CAESAR_TASK_DIR/hard") 2>/dev/null && echo "WROTE hardlink" || echo "DENIED hardlink"`,
        `mount -o remount,rw / 2>/dev/null && echo "WROTE remount" || echo "DENIED remount"`,
      ].join("\n");
      for (const isolation of ["inplace", "worktree"]) {
        const root = project(script, "required");
        const result = await run(root, ["--mode", "read-only", "--isolation", isolation]);
        expect(result.raw, isolation).not.toContain("WROTE");
        expect(result.raw.match(/DENIED/g)?.length, isolation).toBe(8);
        expect(readFileSync(join(root, "src/app.txt"), "utf8")).toBe("original\n");
        expect(result.state.report.changes, isolation).toEqual([]);
      }
      const open = project(script, "off");
      const unsandboxed = await run(open, ["--mode", "read-only", "--isolation", "inplace"]);
      expect(unsandboxed.raw).toContain("WROTE node");
    },
  );

  itWith(
    BUBBLEWRAP,
    "credentials stay unreadable: ~/.ssh, ~/.aws, under the agent's home and the account's",
    async () => {
      const home = tempDir("caesar-sandbox-home-");
      mkdirSync(join(home, ".ssh"));
      writeFileSync(join(home, ".ssh", "id_ed25519"), "PRIVATE KEY\n");
      mkdirSync(join(home, ".aws"));
      writeFileSync(join(home, ".aws", "credentials"), "aws_secret_access_key = SECRET\n");
      const script = `cat "$HOME/.ssh/id_ed25519" "$HOME/.aws/credentials" 2>/dev/null; ls -A "$HOME/.ssh" | wc -l`;
      const root = project(script, "required");
      const result = await run(root, [], { HOME: home });
      expect(result.raw).not.toContain("PRIVATE KEY");
      expect(result.raw).not.toContain("SECRET");
      expect(result.raw).toMatch(/^0$/m);
      const open = await run(project(script, "off"), [], { HOME: home });
      expect(open.raw).toContain("PRIVATE KEY");
    },
  );

  itWith(
    BUBBLEWRAP,
    "other tasks' files and the server's key stay unreadable; the task's own directory and worktree work",
    async () => {
      const script = [
        `cat "$ROOT/.caesar/state/serve/token" 2>/dev/null || echo "DENIED token"`,
        `cat "$ROOT/.caesar/tasks/t_0ther000/raw.log" 2>/dev/null || echo "DENIED other task"`,
        `cat "$ROOT/.caesar/wt/t_0ther000/work.txt" 2>/dev/null || echo "DENIED other worktree"`,
        `cat "$CAESAR_TASK_FILE" >/dev/null && echo "READ own task"`,
        `echo mine > own.txt && echo "WROTE own worktree"`,
      ].join("\n");
      const plant = (root: string) =>
        writeFiles(root, {
          ".caesar/state/serve/token": "BEARER-SECRET\n",
          ".caesar/tasks/t_0ther000/raw.log": "OTHER TASK OUTPUT\n",
          ".caesar/wt/t_0ther000/work.txt": "OTHER WORK\n",
        });
      const root = project(script, "required");
      plant(root);
      const result = await run(root, [], { ROOT: root });
      expect(result.raw).not.toContain("BEARER-SECRET");
      expect(result.raw).not.toContain("OTHER TASK OUTPUT");
      expect(result.raw).not.toContain("OTHER WORK");
      expect(result.raw).toContain("DENIED token");
      expect(result.raw).toContain("READ own task");
      expect(result.raw).toContain("WROTE own worktree");
      expect(result.state.report.changes.map((change) => change.path)).toEqual(["own.txt"]);
      const openRoot = project(script, "off");
      plant(openRoot);
      const open = await run(openRoot, [], { ROOT: openRoot });
      expect(open.raw).toContain("BEARER-SECRET");
    },
  );

  itWith(
    BUBBLEWRAP,
    "a check runs in the task's sandbox: what the agent wrote for it writes only the worktree",
    async () => {
      const home = tempDir("caesar-sandbox-home-");
      // The agent writes the check's script into its worktree; the check runs it.
      const script = [
        "cat > check.sh <<'EOF'",
        tryWrite(["$PWD/built.txt", "$ROOT/src/app.txt", `${home}/.bashrc`]),
        "EOF",
        "chmod +x check.sh",
      ].join("\n");
      const sandboxed = project(script, "required");
      const result = await run(sandboxed, ["--check", "sh ./check.sh"], { ROOT: sandboxed, HOME: home });
      const log = readFileSync(join(taskDir(sandboxed, result.task_id), "checks", "1-1.log"), "utf8");
      expect(log).toContain("WROTE");
      expect(
        log
          .split("\n")
          .filter((line) => line.startsWith("WROTE "))
          .map((line) => line.replace(/^WROTE .*\//, "")),
      ).toEqual(["built.txt"]);
      expect(readFileSync(join(sandboxed, "src/app.txt"), "utf8")).toBe("original\n");
      expect(existsSync(join(home, ".bashrc"))).toBe(false);

      // Without the sandbox, the same check writes the person's checkout and home.
      const open = project(script, "off");
      const unsandboxed = await run(open, ["--check", "sh ./check.sh"], { ROOT: open, HOME: home });
      const openLog = readFileSync(join(taskDir(open, unsandboxed.task_id), "checks", "1-1.log"), "utf8");
      expect(openLog).toContain(`WROTE ${open}/src/app.txt`);
      expect(existsSync(join(home, ".bashrc"))).toBe(true);
    },
  );

  itWith(BUBBLEWRAP, "another task's processes and their environment are invisible", async () => {
    const script = [
      'if [ -n "$OTHER_SECRET" ]; then sleep 30; exit 0; fi',
      "ps -e -o pid= | wc -l",
      "cat /proc/[0-9]*/environ 2>/dev/null | tr '\\0' '\\n' | grep -c OTHER_SECRET",
    ].join("\n");
    for (const mode of ["required", "off"] as const) {
      const root = project(script, mode);
      // Another task of the project, running, with a secret in its environment.
      const started = await runCaesar(["run", "--detach", "--json", "--agent", "probe", "keep a secret"], {
        cwd: root,
        env: { OTHER_SECRET: "hunter2" },
      });
      const other = parseJsonOutput<{ task_id: string }>(started).task_id;
      for (
        let i = 0;
        i < 100 &&
        !readJson<{ agent_process: unknown }>(join(taskDir(root, other), "state.json")).agent_process;
        i++
      )
        await new Promise((resolve) => setTimeout(resolve, 100));
      const result = await run(root, []);
      await runCaesar(["cancel", other], { cwd: root });
      const [processes, secrets] = result.raw.trim().split("\n").map(Number);
      if (mode === "required") {
        expect(processes).toBeLessThan(8);
        expect(secrets).toBe(0);
      } else expect(secrets).toBeGreaterThan(0);
    }
  });

  itWith(
    BUBBLEWRAP,
    "a nested request goes through the task's broker only; forged ones are refused",
    async () => {
      const bin = tempDir("caesar-sandbox-bin-");
      writeFileSync(join(bin, "caesar"), `#!/bin/sh\nexec "${process.execPath}" "${CAESAR_BIN}" "$@"\n`);
      chmodSync(join(bin, "caesar"), 0o755);
      const script = [
        `caesar run --json --agent probe "inner" > "$CAESAR_TASK_DIR/inner.json" 2>/dev/null; echo "BROKERED $?"`,
        `CAESAR_BROKER= caesar run --json --agent probe "direct" 2>/dev/null | grep -o '"code": "[a-z_]*"' | head -1 | sed 's/^/DIRECT /'`,
        `CAESAR_BROKER= CAESAR_BROKER_CALLER=$CAESAR_TASK_ID caesar run --json --agent probe "forged" 2>/dev/null | grep -o '"code": "[a-z_]*"' | head -1 | sed 's/^/FORGED /'`,
        `caesar run --json --root / --agent probe "elsewhere" 2>&1 | head -1 | sed 's/^/ROOT /'`,
        `ls "$(dirname "$CAESAR_BROKER")/../.." | tr '\\n' ' ' | sed 's/^/CONTROL /'; echo`,
        `[ -S "$(dirname "$CAESAR_BROKER")/../../../service/service.sock" ] && echo "SERVICE visible" || echo "SERVICE hidden"`,
      ].join("\n");
      const root = project(
        // The top task is depth 1 (its caller, the person, is 0): a deeper one is the inner task.
        `[ "$CAESAR_DEPTH" != "1" ] && { printf '{"protocol":"caesar.report/v1","status":"success","summary":"inner"}' > "$CAESAR_REPORT_PATH"; exit 0; }\n${script}`,
        "required",
        '[policy]\nallow_recursion = true\n\n[risk_profiles.default]\ndelegation_policy = { mode = "allow" }\n',
      );
      const result = await run(root, [], { PATH: `${bin}:${process.env.PATH}` });
      expect(result.raw).toContain("BROKERED 0");
      const inner = readJson<{
        task_id: string;
        state: { depth: number; parent_id: string; outcome: string };
      }>(join(taskDir(root, result.task_id), "inner.json"));
      expect(inner.state).toMatchObject({ depth: 2, parent_id: result.task_id, outcome: "succeeded" });
      expect(result.raw).toContain('DIRECT "code": "nested_unproven"');
      expect(result.raw).toContain('FORGED "code": "nested_unproven"');
      expect(result.raw).toContain("ROOT caesar: --root is not available to a sandboxed agent");
      expect(result.raw).toMatch(/^CONTROL \S+ $/m);
      expect(result.raw).toContain("SERVICE hidden");
    },
  );

  itWith(
    BUBBLEWRAP,
    "outside git, a task runs in place in its sandbox: caesar's records, under .caesar/state, stay hidden",
    async () => {
      // Outside git the control directory is .caesar/state/control: inside .caesar/state, hidden too.
      const root = tempDir("caesar-sandbox-nogit-");
      const agent = join(tempDir("caesar-sandbox-agent-"), "probe.sh");
      writeFileSync(
        agent,
        `#!/bin/sh\n${tryWrite(["$PWD/own.txt", "$PWD/.caesar/state/control/forged.json"])}\nfind "$PWD/.caesar/state" -type f | wc -l | sed 's/^/RECORDS /'\nprintf '{"protocol":"caesar.report/v1","status":"success","summary":"probed"}' > "$CAESAR_REPORT_PATH"\n`,
      );
      chmodSync(agent, 0o755);
      writeFiles(root, {
        ".caesar/config.toml": `[sandbox]\nmode = "required"\n[[agent]]\nid = "probe"\nbin = "${agent}"\n`,
      });
      const result = await run(root, []);
      expect(result.state.outcome, result.raw).toBe("succeeded");
      expect(result.raw).toContain(`WROTE ${root}/own.txt`);
      expect(result.raw).toContain(`DENIED ${root}/.caesar/state/control/forged.json`);
      // Not one of caesar's records is there inside (the folder holds only the task's broker), all outside.
      expect(result.raw).toMatch(/^RECORDS 0$/m);
      expect(
        existsSync(join(root, ".caesar", "state", "control", "tasks", result.task_id, "state.json")),
      ).toBe(true);
    },
  );
});

describe("where no sandbox can run (bubblewrap not on PATH)", () => {
  /** A PATH with git and node and nothing else: no bwrap to find. */
  function pathWithoutBwrap(): string {
    const bin = tempDir("caesar-no-bwrap-");
    const git = spawnSync("sh", ["-c", "command -v git"], { encoding: "utf8" }).stdout.trim();
    symlinkSync(git, join(bin, "git"));
    symlinkSync(process.execPath, join(bin, "node"));
    return bin;
  }

  it('mode = "required" refuses before anything exists, saying what to install', async () => {
    const root = project("echo ran", "required");
    const result = await runCaesar(["run", "--json", "--agent", "probe", "probe"], {
      cwd: root,
      env: { PATH: pathWithoutBwrap() },
    });
    expect(result.code).not.toBe(0);
    const error = parseJsonOutput<{ error: { code: string; summary: string; detail: string } }>(result).error;
    expect(error.code).toBe("sandbox_unavailable");
    expect(error.summary).toContain("bubblewrap is not installed");
    expect(error.detail).toContain('[sandbox] mode = "required" (project)');
    expect(existsSync(join(root, ".caesar", "tasks"))).toBe(false);
  });

  it('mode = "auto" runs it unsandboxed, with a high finding and a warning on the run', async () => {
    const root = project("echo ran", "auto");
    const result = await runCaesar(["run", "--json", "--agent", "probe", "probe"], {
      cwd: root,
      env: { PATH: pathWithoutBwrap() },
    });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toMatch(
      /caesar: warning: t_[0-9a-f]+ runs without an OS sandbox: bubblewrap is not installed/,
    );
    const body = parseJsonOutput<RunJson>(result);
    expect(body.state.report.findings).toContainEqual(
      expect.objectContaining({ severity: "high", title: "The agent ran without an OS sandbox" }),
    );
  });

  it("auto: the finding, a warning on the run, and a warning per contender of a race", async () => {
    const root = project("echo ran", "auto");
    const env = { PATH: pathWithoutBwrap() };
    const result = await runCaesar(["run", "--json", "--agent", "probe", "probe"], { cwd: root, env });
    expect(result.code, result.stderr).toBe(0);
    const warning =
      /^caesar: warning: (t_[0-9a-f]+) runs without an OS sandbox: bubblewrap is not installed/gm;
    expect([...result.stderr.matchAll(warning)]).toHaveLength(1);
    const finding = parseJsonOutput<RunJson>(result).state.report.findings.find(
      (f) => f.title === "The agent ran without an OS sandbox",
    ) as { severity: string; detail: string } | undefined;
    expect(finding).toMatchObject({ severity: "high" });
    expect(finding?.detail).toContain('[sandbox] mode = "auto" (project)');

    const race = await runCaesar(["race", "--json", "--agent", "probe", "--agent", "probe-too", "probe"], {
      cwd: root,
      env,
    });
    const { task_ids } = parseJsonOutput<{ task_ids: string[] }>(race);
    expect([...race.stderr.matchAll(warning)].map((match) => match[1]).sort()).toEqual([...task_ids].sort());
  });
});
