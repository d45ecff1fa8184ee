import { mkdirSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { decidePermission, type PermissionContext } from "../../../src/agents/acp/permission-policy.js";
import { isReadOnlyCommand } from "../../../src/agents/acp/read-only-command.js";
import { type KnownToolCall, ToolCalls } from "../../../src/agents/acp/tool-calls.js";
import { tempDir } from "../../helpers/repo.js";

describe("isReadOnlyCommand: only what provably changes nothing", () => {
  it.each([
    "ls -la",
    "git log --oneline -5",
    "git diff HEAD~1",
    "cat README.md | head -5",
    "grep -rn 'TODO' src && git status",
    "/bin/bash -lc 'rg foo src'",
    "find . -name '*.ts'",
    "sed -n 1,20p file.ts",
    "sed -n '/error/,/warn/p' log.txt",
    "sed -e 's/a/b/g' -e '/x/d' file.ts",
    "grep -n 'a\\.b' file.ts",
    "git grep -c TODO",
    "sort -u names.txt",
    "uniq -c names.txt",
    "date -Iseconds",
  ])("allows %s", (command) => {
    expect(isReadOnlyCommand(command)).toBe(true);
  });

  it.each([
    "echo OK > hello.txt",
    "cat a >> b",
    "rm -rf src",
    "git commit -am x",
    "git push",
    "git",
    "find . -delete",
    "find . -exec rm {} ;",
    "sed -i s/a/b/ file",
    "sort -o out.txt in.txt",
    "ls; rm x",
    "ls && touch x",
    "cat $(echo secret)",
    "echo `id`",
    "sleep 10 &",
    "npm test",
    "bash -c 'ls'; rm x",
    "env rm x",
    "awk '{print > \"x\"}' f",
    "ls 'unclosed",
    "",
    // A quoted `bash -c` word that is not one word: bash runs what follows it.
    "bash -c 'ls '; touch ' x'",
    // An escaped quote: the shell splits where a quote-only parser would not.
    "echo \\'; touch x; echo \\'",
    // Readers with options or script commands that write, execute or change the system.
    "sed -n '1e touch x' README.md",
    "sed 's/a/b/w out.txt' file.ts",
    "sed -n '1,5w out.txt' file.ts",
    "sed -f script.sed file.ts",
    "sed -ni 's/a/b/' file.ts",
    "sort -uo out.txt in.txt",
    "sort --compress-program=./evil -S 1 big.txt",
    "rg --pre 'touch x' foo",
    "file -bC -m magic",
    "date -s 2000-01-01",
    "uniq in.txt out.txt",
    "git grep -O'touch x' foo",
    "git grep --open-files-in-pager=touch foo",
    "git --config-env=core.pager=SHELL log",
    "git -c core.fsmonitor='touch x' status",
  ])("refuses %s", (command) => {
    expect(isReadOnlyCommand(command)).toBe(false);
  });
});

function call(update: Record<string, unknown>): KnownToolCall {
  return new ToolCalls().merge({ toolCallId: "c1", ...update })!;
}

function context(mode: "read-only" | "write"): PermissionContext & { outside: string; taskDir: string } {
  const root = tempDir("caesar-policy-");
  const workspace = join(root, "work");
  const taskDir = join(root, "task");
  const outside = join(root, "outside");
  for (const dir of [workspace, taskDir, outside]) mkdirSync(dir, { recursive: true });
  symlinkSync(outside, join(workspace, "escape"));
  return {
    mode,
    workspace,
    readableDirs: [taskDir],
    writableFiles: [join(taskDir, "report.json")],
    channel: { name: "caesar", tools: ["ask_orchestrator", "submit_report"] },
    outside,
    taskDir,
  };
}

describe("decidePermission: caesar's policy for an ACP agent's permission requests", () => {
  it("write mode: edits inside the workspace and the task directory pass; outside, or through a link, they do not", async () => {
    const ctx = context("write");
    const inside = await decidePermission(
      call({ kind: "edit", locations: [{ path: join(ctx.workspace, "a.ts") }] }),
      ctx,
    );
    expect(inside.allow).toBe(true);
    const report = await decidePermission(
      call({ kind: "edit", rawInput: { file_path: join(ctx.taskDir, "report.json") } }),
      ctx,
    );
    expect(report.allow).toBe(true);
    const outside = await decidePermission(
      call({ kind: "edit", locations: [{ path: join(ctx.outside, "x") }] }),
      ctx,
    );
    expect(outside).toMatchObject({
      allow: false,
      reason: expect.stringContaining("outside the task's workspace"),
    });
    const viaLink = await decidePermission(
      call({ kind: "edit", locations: [{ path: join(ctx.workspace, "escape", "x") }] }),
      ctx,
    );
    expect(viaLink.allow).toBe(false);
    const dotdot = await decidePermission(
      call({ kind: "delete", locations: [{ path: `${ctx.workspace}/../outside/x` }] }),
      ctx,
    );
    expect(dotdot.allow).toBe(false);
    // The rest of the task directory is not the agent's: an answer written there would grant its permissions.
    const answer = await decidePermission(
      call({ kind: "edit", locations: [{ path: join(ctx.taskDir, "answers", "q_1.json") }] }),
      ctx,
    );
    expect(answer.allow).toBe(false);
    const unknownPath = await decidePermission(call({ kind: "edit", title: "Edit something" }), ctx);
    expect(unknownPath).toMatchObject({ allow: false, reason: "an edit whose path the agent did not say" });
  });

  it("write mode: commands pass, unless they run outside the workspace", async () => {
    const ctx = context("write");
    expect(
      (await decidePermission(call({ kind: "execute", rawInput: { command: "npm test" } }), ctx)).allow,
    ).toBe(true);
    const elsewhere = await decidePermission(
      call({ kind: "execute", rawInput: { command: "ls", cwd: ctx.outside } }),
      ctx,
    );
    expect(elsewhere.allow).toBe(false);
  });

  it("read-only: edits refused even inside the workspace, the task directory still writable, read-only commands only", async () => {
    const ctx = context("read-only");
    const edit = await decidePermission(
      call({ kind: "edit", locations: [{ path: join(ctx.workspace, "a.ts") }] }),
      ctx,
    );
    expect(edit).toMatchObject({ allow: false, reason: "a read-only task changes no file in the workspace" });
    const report = await decidePermission(
      call({ kind: "edit", locations: [{ path: join(ctx.taskDir, "report.json") }] }),
      ctx,
    );
    expect(report.allow).toBe(true);
    expect(
      (
        await decidePermission(
          call({ kind: "execute", rawInput: { command: ["/bin/bash", "-lc", "git status"] } }),
          ctx,
        )
      ).allow,
    ).toBe(true);
    expect(
      (
        await decidePermission(
          call({ kind: "execute", rawInput: { command: ["/bin/bash", "-lc", "echo x > y"] } }),
          ctx,
        )
      ).allow,
    ).toBe(false);
    // No command in the input: the title is judged, and a title that is not a read-only command fails.
    expect((await decidePermission(call({ kind: "execute", title: "Run the build" }), ctx)).allow).toBe(
      false,
    );
    expect((await decidePermission(call({ kind: "switch_mode", title: "Exit plan mode" }), ctx)).allow).toBe(
      false,
    );
    expect((await decidePermission(call({ kind: "other", title: "some_mcp_tool" }), ctx)).allow).toBe(false);
    expect(
      (await decidePermission(call({ kind: "read", locations: [{ path: join(ctx.workspace, "a") }] }), ctx))
        .allow,
    ).toBe(true);
    expect(
      (await decidePermission(call({ kind: "read", locations: [{ path: join(ctx.outside, "a") }] }), ctx))
        .allow,
    ).toBe(false);
  });

  it("the return channel's tools pass in any mode, but a command or edit named like one does not", async () => {
    const ctx = context("read-only");
    const ask = await decidePermission(
      call({ kind: "other", title: "ask_orchestrator (caesar MCP Server)" }),
      ctx,
    );
    expect(ask).toMatchObject({ allow: true, reason: "caesar's return channel" });
    expect(
      (await decidePermission(call({ kind: "other", title: "mcp__caesar__submit_report" }), ctx)).allow,
    ).toBe(true);
    expect(
      (await decidePermission(call({ kind: "other", title: "not_ask_orchestrator_really" }), ctx)).allow,
    ).toBe(false);
    expect((await decidePermission(call({ kind: "other", title: "evil_ask_orchestrator" }), ctx)).allow).toBe(
      false,
    );
    expect(
      (await decidePermission(call({ kind: "other", name: "caesar-ask_orchestrator", title: "Ask" }), ctx))
        .allow,
    ).toBe(true);
    const disguised = await decidePermission(
      call({ kind: "execute", title: "submit_report", rawInput: { command: "rm -rf ." } }),
      ctx,
    );
    expect(disguised.allow).toBe(false);
  });
});

describe("ToolCalls: what is known of a call, merged from every update", () => {
  it("keeps the richest input, gathers paths from locations, diffs and input members", () => {
    const calls = new ToolCalls();
    calls.merge({ toolCallId: "x", title: "bash", kind: "execute", rawInput: { command: "ls" } });
    calls.merge({ toolCallId: "x", rawInput: {} });
    calls.merge({
      toolCallId: "x",
      content: [{ type: "diff", path: "/w/a.ts", oldText: "a", newText: "b" }],
    });
    const known = calls.merge({
      toolCallId: "x",
      locations: [{ path: "/w/b.ts" }],
      rawInput: { command: "ls", filePath: "/w/c.ts" },
    })!;
    expect(known.rawInput).toEqual({ command: "ls", filePath: "/w/c.ts" });
    expect(known.paths.sort()).toEqual(["/w/a.ts", "/w/b.ts", "/w/c.ts"]);
    expect(known.diffs).toEqual([{ path: "/w/a.ts", oldText: "a" }]);
    expect(calls.merge({ title: "no id" })).toBeUndefined();
    expect(calls.merge({ toolCallId: 7 })).toBeUndefined();
  });
});
