import { execFileSync, spawnSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { GIT_SUBCOMMANDS } from "../../../src/agents/acp/read-only/git.js";
import type { OptionTable } from "../../../src/agents/acp/read-only/options.js";
import { isReadOnlyCommand, READ_ONLY_PROGRAMS } from "../../../src/agents/acp/read-only-command.js";
import { tempDir } from "../../helpers/repo.js";

/** Every prefix of every option a table refuses, as `prog --prefix=x` and `prog --prefix x`. */
function abbreviationsOfRefused(prefix: string, table: OptionTable): string[] {
  const commands: string[] = [];
  for (const [name, option] of table.long) {
    if (!option.refused) continue;
    for (let length = 1; length <= name.length; length++) {
      const abbreviation = name.slice(0, length);
      // An abbreviation that is itself the full name of an allowed option is that option.
      if (table.long.get(abbreviation)?.refused === false) continue;
      commands.push(`${prefix} --${abbreviation}=x file`, `${prefix} --${abbreviation} x file`);
    }
  }
  return commands;
}

describe("isReadOnlyCommand: an allow-list of programs and options, abbreviations resolved", () => {
  it.each([
    "sed --in -e s/a/b/ file",
    "sed --in-pl=.bak s/a/b/ file",
    "sed --i s/a/b/ file",
    "sed --fi script.sed file",
    "sort --outp=out.txt in.txt",
    "sort --o out.txt in.txt",
    "sort --comp=./evil -S 1 big.txt",
    "sort --te=/tmp in.txt",
    "file --comp -m magic",
    "file --no-s x",
    "file --pres x",
    "date --se=2000-01-01",
    "diff --pag a b",
    "rg --pr=./evil foo",
    "git grep --open-f=touch foo",
    "git log --outp=out.txt",
    "git diff --ext",
    "git diff --textc",
    "git cat-file --filt --path=a HEAD:a",
    "git --exec=/tmp log",
    "git --git-d=/tmp/x log",
    "tree -o out.txt",
  ])("refuses the abbreviation %s", (command) => {
    expect(isReadOnlyCommand(command)).toBe(false);
  });

  it("refuses every abbreviation of every writing long option of every program it allows", () => {
    const commands = [
      ...Object.entries(READ_ONLY_PROGRAMS).flatMap(([name, spec]) =>
        abbreviationsOfRefused(name, spec.options),
      ),
      ...Object.entries(GIT_SUBCOMMANDS).flatMap(([sub, table]) =>
        abbreviationsOfRefused(`git ${sub}`, table),
      ),
    ];
    expect(commands.length).toBeGreaterThan(150);
    expect(commands.filter((command) => isReadOnlyCommand(command))).toEqual([]);
  });

  it.each([
    "ls --bogus",
    "cat -Z file",
    "grep --frobnicate x",
    "git log --no-such-thing",
    "git status --no-bogus",
    "find . -fprint out.txt",
    "find . -name '*.ts' -fls out.txt",
    "find . -execdir rm {} +",
    "find . -ok rm {} ;",
    "git stash",
    "git checkout -- .",
    "sed -s -i s/a/b/ file",
    "sort -k1 -o out.txt in.txt",
    "sort -uoout.txt in.txt",
  ])("refuses what is not allowed: %s", (command) => {
    expect(isReadOnlyCommand(command)).toBe(false);
  });

  it.each([
    "cat README.md",
    "cat -n src/app.ts",
    "ls -la src",
    "ls --col=never -1",
    "grep -r TODO src",
    "grep -rn --include='*.ts' 'a\\.b' src",
    "grep --ignore-c todo README.md",
    "grep -C3 -e foo -e bar file",
    "egrep -c 'a|b' file",
    "head -n 20 file",
    "head -20 file",
    "tail -5 file",
    "wc -l src/a.ts src/b.ts",
    "sort -t, -k2 -n data.csv",
    "uniq -c names.txt",
    "cut -d: -f1 /etc/passwd",
    "diff -u a.txt b.txt",
    "du -sh src",
    "stat -c %s file",
    "file -b file",
    "find . -name '*.ts' -not -path './node_modules/*' -type f",
    "find src -maxdepth 2 -newer package.json -print0",
    "git status",
    "git status --short --branch",
    "git --no-pager diff --stat HEAD~1",
    "git diff --cached --name-only",
    "git diff -U5 -- src",
    "git log --oneline --graph -n 5",
    "git log -p -S needle --since=2.weeks -- src/a.ts",
    "git log -10 --format='%h %s'",
    "git show HEAD:src/a.ts",
    "git show --stat HEAD",
    "git blame -L 1,10 src/a.ts",
    "git grep -n TODO -- '*.ts'",
    "git ls-files -m",
    "git rev-parse --show-toplevel",
    "git rev-parse --abbrev-ref HEAD",
    "sed -n '1,20p' file",
    "sed -E -n -e '/x/p' file",
    "realpath --relative-to=. src",
    "echo --in-place",
    "jq -r .name package.json",
  ])("still grants an ordinary read: %s", (command) => {
    expect(isReadOnlyCommand(command)).toBe(true);
  });
});

/** A GNU program's long options as its `--help` lists them (undefined when it is not GNU's). */
function gnuLongOptions(program: string): string[] | undefined {
  const version = spawnSync(program, ["--version"], { encoding: "utf8" });
  if (version.status !== 0 || !/GNU/.test(version.stdout)) return undefined;
  const help = spawnSync(program, ["--help"], { encoding: "utf8" }).stdout;
  return [...new Set([...help.matchAll(/--([a-z0-9][a-z0-9-]*)/g)].map((match) => match[1]!))];
}

describe("the allow-list knows every long option of the installed GNU tools, so abbreviations resolve alike", () => {
  const programs = Object.keys(READ_ONLY_PROGRAMS).filter((name) => gnuLongOptions(name) !== undefined);
  it.skipIf(programs.length === 0).each(programs)("%s", (program) => {
    const known = READ_ONLY_PROGRAMS[program]!.options.long;
    const unknown = gnuLongOptions(program)!.filter((option) => !known.has(option));
    expect(unknown).toEqual([]);
  });

  it("the attacks are real: GNU sed and sort write through an abbreviation", () => {
    const dir = tempDir("caesar-abbrev-");
    writeFileSync(join(dir, "file"), "a\n");
    const sed = ["--in", "-e", "s/a/b/", "file"];
    if (spawnSync("sed", sed, { cwd: dir }).status !== 0) return;
    expect(readFileSync(join(dir, "file"), "utf8")).toBe("b\n");
    execFileSync("sort", ["--outp=out", "file"], { cwd: dir });
    expect(readFileSync(join(dir, "out"), "utf8")).toBe("b\n");
    expect(isReadOnlyCommand(`sed ${sed.join(" ")}`)).toBe(false);
    expect(isReadOnlyCommand("sort --outp=out file")).toBe(false);
  });
});
