import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, expect, it } from "vitest";
import { CAESAR_BIN } from "../helpers/cli.js";
import { describeWith, locate, TMUX } from "../helpers/system-deps.js";
import { ago, FixtureProject, removeFixtureProjects } from "./fixture-project.js";

/**
 * `caesar watch` in a real terminal: tmux gives it a pane of a fixed size, and `capture-pane` reads
 * back what a person would see. The tasks are directories this test writes, with this test process as
 * their (live) conductor.
 */
const TMUX_BIN = locate(TMUX);
// A server of our own on a socket of our own: the user's tmux sessions are never touched.
const SOCKET_DIR = TMUX_BIN ? mkdtempSync(join(tmpdir(), "caesar-ui-tmux-")) : "";
const SOCKET = join(SOCKET_DIR, "socket");
const SESSION = "watch";

function tmux(...args: string[]): string {
  return execFileSync(TMUX_BIN!, ["-S", SOCKET, "-f", "/dev/null", ...args], { encoding: "utf8" });
}

function pane(): string {
  return tmux("capture-pane", "-p", "-t", SESSION);
}

/** Poll the pane until `predicate` holds; generous deadline, no assertion on how fast. */
async function waitForPane(predicate: (screen: string) => boolean, what: string): Promise<string> {
  const deadline = Date.now() + 30_000;
  let screen = "";
  while (Date.now() < deadline) {
    screen = pane();
    if (predicate(screen)) return screen;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`the pane never showed ${what}; it shows:\n${screen}`);
}

function shellQuote(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`;
}

afterAll(() => {
  if (!TMUX_BIN) return;
  spawnSync(TMUX_BIN, ["-S", SOCKET, "kill-server"]);
  rmSync(SOCKET_DIR, { recursive: true, force: true });
  removeFixtureProjects();
});

describeWith("caesar watch in a terminal (tmux)", TMUX, () => {
  it("shows the running tool, the silence marker and a pending question on top, live; q quits", async () => {
    const project = new FixtureProject();
    project.writeState("t_aaaa0001", {
      agent: "codex",
      objective: "Run the slow suite",
      started_at: ago(10 * 60_000),
    });
    project.appendEvents("t_aaaa0001", [
      { type: "started", agent: "codex", at: ago(10 * 60_000) },
      {
        type: "tool_use",
        tool: "bash",
        id: "item_1",
        input_summary: "npm run test:slow",
        status: "started",
        at: ago(4 * 60_000),
      },
    ]);
    project.writeState("t_bbbb0002", { agent: "claude", objective: "Add a cache to the API client" });
    project.appendEvents("t_bbbb0002", [
      { type: "started", agent: "claude" },
      { type: "message", text: "Reading the client first." },
    ]);

    // The pane outlives caesar watch, so its exit (and any error it printed) can be read back.
    const command = `${[process.execPath, CAESAR_BIN, "watch", "--root", project.root].map(shellQuote).join(" ")}; echo "caesar watch exited with $?"; sleep 600`;
    tmux(
      "new-session",
      "-d",
      "-s",
      SESSION,
      "-x",
      "100",
      "-y",
      "40",
      "-e",
      "LANG=C.UTF-8",
      "-e",
      "NO_COLOR=",
      command,
    );

    let screen = await waitForPane((s) => s.includes("t_aaaa0001") && s.includes("t_bbbb0002"), "both tasks");
    expect(screen).toMatch(/▸ bash {2}npm run test:slow · 4m\d\ds/);
    expect(screen).toMatch(/! t_aaaa0001 .*! silent 4m\d\ds/);
    expect(screen).toContain("“Reading the client first.”");

    // A tool shows as soon as it starts.
    project.appendEvents("t_bbbb0002", [
      {
        seq: 2,
        type: "tool_use",
        tool: "Read",
        id: "toolu_1",
        input_summary: "src/api/client.ts",
        status: "started",
      },
    ]);
    await waitForPane((s) => s.includes("▸ Read  src/api/client.ts"), "the tool that just started");

    // A question jumps above everything.
    project.appendEvents("t_bbbb0002", [
      { seq: 3, type: "tool_use", tool: "", id: "toolu_1", status: "succeeded" },
      {
        seq: 4,
        type: "question",
        question_id: "q_ttl",
        question: "Expire entries after a TTL, or on write?",
      },
    ]);
    screen = await waitForPane((s) => s.includes("caesar answer t_bbbb0002 q_ttl"), "the pending question");
    const lines = screen.split("\n");
    expect(lines[0]).toMatch(/^caesar watch {2}2 running · 1 question · 1 silent .*q quits$/);
    expect(lines[2]).toMatch(/^\? t_bbbb0002 asks {2}q_ttl/);
    expect(lines[3]).toBe("  Expire entries after a TTL, or on write?");
    expect(lines[4]).toBe('  answer → caesar answer t_bbbb0002 q_ttl "<text>"');
    const firstTask = lines.findIndex((line) => /^. t_(aaaa0001|bbbb0002) {2}/.test(line));
    expect(lines[firstTask]).toMatch(/^\? t_bbbb0002 .*\? question$/);
    expect(lines.findIndex((line) => line.includes("t_aaaa0001"))).toBeGreaterThan(firstTask);

    // Answered: the question leaves the top.
    project.appendEvents("t_bbbb0002", [
      { seq: 5, type: "answer", question_id: "q_ttl", answer: "on write" },
    ]);
    await waitForPane(
      (s) => !s.includes("caesar answer") && s.includes("t_bbbb0002"),
      "the question answered",
    );

    tmux("send-keys", "-t", SESSION, "q");
    screen = await waitForPane((s) => s.includes("caesar watch exited with"), "caesar watch quitting on q");
    expect(screen).toContain("caesar watch exited with 0");
    // The alternate screen is left: the watch screen is gone from the terminal.
    expect(screen).not.toContain("t_aaaa0001");
  });
});
