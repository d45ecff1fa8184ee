import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  approveMessage,
  getApprovalStatus,
  initChannel,
  makeChatContext,
  postMessage,
  readMessages,
} from "../../src/chat/index.js";
import { parseJsonOutput } from "../helpers/cli.js";
import { chat, makeChatRoot } from "./helpers.js";

function governed(now = () => new Date()) {
  const ctx = makeChatContext({ root: makeChatRoot(), env: {}, now });
  return initChannel(ctx, "gov", {
    members: ["alice", "bob"],
    maintainer: "mia",
    approvalBands: { merge: "approval-required", push: "notify", "*": "auto" },
    vetoWindowS: 60,
  }).then(() => ctx);
}

describe("governance profile", () => {
  it("writes maintainer, bands and veto window to _meta.json", async () => {
    const root = makeChatRoot();
    const init = await chat(root, [
      "init",
      "g",
      "--maintainer",
      "mia",
      "--band",
      "merge=approval-required",
      "--band",
      "push=notify",
      "--veto-window",
      "90",
      "--json",
    ]);
    expect(parseJsonOutput(init)).toMatchObject({
      maintainer: "mia",
      approval_bands: { merge: "approval-required", push: "notify" },
      veto_window_s: 90,
    });
    const bad = await chat(root, ["init", "h", "--maintainer", "mia", "--band", "merge=maybe", "--json"]);
    expect(bad.code).toBe(2);
    const noMaintainer = await chat(root, ["init", "i", "--band", "merge=auto", "--json"]);
    expect(parseJsonOutput<{ error: { code: string } }>(noMaintainer).error.code).toBe("invalid_argument");
  });

  it("an approval-required action posts needs-approval and is pending until the maintainer approves", async () => {
    const ctx = await governed();
    const request = await postMessage(ctx, "gov", {
      from: "alice",
      title: "Merge feature x",
      action: "merge",
    });
    expect(request.status).toBe("needs-approval");
    expect(request.governance).toMatchObject({ band: "approval-required", action: "merge" });
    expect(await getApprovalStatus(ctx, "gov", request.seq)).toMatchObject({
      state: "pending",
      action: "merge",
    });

    await expect(approveMessage(ctx, "gov", request.seq, { as: "bob" })).rejects.toMatchObject({
      code: "not_maintainer",
    });
    // A hand-made "approved" from someone else is refused when posted through caesar...
    await expect(
      postMessage(ctx, "gov", { from: "bob", title: "ok", status: "approved", replyTo: request.seq }),
    ).rejects.toMatchObject({ code: "not_maintainer" });

    const approved = await approveMessage(ctx, "gov", request.seq, { as: "mia", note: "ship it" });
    expect(approved).toMatchObject({
      status: "approved",
      to: ["alice"],
      target: { seq: 1, action: "merge" },
    });
    expect(await getApprovalStatus(ctx, "gov", request.seq)).toMatchObject({
      state: "approved",
      decided_in: 2,
    });
    const inbox = await readMessages(ctx, "gov", { as: "alice" });
    expect(inbox.messages).toMatchObject([
      { status: "approved", reply_to: 1, from: "mia", body: "ship it\n" },
    ]);
  });

  it("a notify action carries its veto deadline; a veto stops it, silence lets it through", async () => {
    let now = new Date("2026-07-17T10:00:00Z");
    const ctx = await governed(() => now);
    const push = await postMessage(ctx, "gov", { from: "alice", title: "Push y", action: "push" });
    expect(push.status).toBe("notify");
    expect(Date.parse(push.governance!.veto_until!)).toBe(Date.parse("2026-07-17T10:01:00Z"));
    expect((await getApprovalStatus(ctx, "gov", push.seq)).state).toBe("pending");
    now = new Date("2026-07-17T10:02:00Z");
    expect((await getApprovalStatus(ctx, "gov", push.seq)).state).toBe("veto-window-passed");

    const other = await postMessage(ctx, "gov", { from: "alice", title: "Push z", action: "push" });
    await approveMessage(ctx, "gov", other.seq, { as: "mia", veto: true });
    expect((await getApprovalStatus(ctx, "gov", other.seq)).state).toBe("vetoed");
  });

  it("other actions are automatic, and a band's status cannot be overridden", async () => {
    const ctx = await governed();
    const refactor = await postMessage(ctx, "gov", { from: "alice", title: "Refactor", action: "refactor" });
    expect(refactor.governance?.band).toBe("auto");
    expect(refactor.status).toBe("discussion");
    await expect(
      postMessage(ctx, "gov", { from: "alice", title: "Merge", action: "merge", status: "done" }),
    ).rejects.toMatchObject({ code: "invalid_argument" });
  });

  it("reads another tool's _meta.json leniently, and an unknown band as approval-required", async () => {
    const ctx = makeChatContext({ root: makeChatRoot(), env: {} });
    mkdirSync(join(ctx.root, "foreign"), { recursive: true });
    writeFileSync(
      join(ctx.root, "foreign", "_meta.json"),
      JSON.stringify({
        members: "alice, bob",
        created: 1768000000,
        maintainer: "mia",
        approval_bands: { deploy: "ask-first" },
        owner: "x",
      }),
    );
    const posted = await postMessage(ctx, "foreign", { from: "alice", title: "Deploy", action: "deploy" });
    expect(posted.governance).toMatchObject({ band: "approval-required" });
    expect(posted.warnings).toEqual([]);
  });

  it("a channel without a maintainer has no approvals", async () => {
    const root = makeChatRoot();
    await chat(root, ["init", "free"]);
    await chat(root, ["post", "free", "--from", "a", "--title", "t"]);
    const result = await chat(root, ["approve", "free", "1", "--as", "a", "--json"]);
    expect(result.code).toBe(1);
    expect(parseJsonOutput<{ error: { code: string; detail: string } }>(result).error).toMatchObject({
      code: "not_maintainer",
      detail: expect.stringContaining("--maintainer"),
    });
    const missing = await chat(root, ["approve", "free", "9", "--as", "a", "--json"]);
    expect(parseJsonOutput<{ error: { code: string } }>(missing).error.code).toBe("not_maintainer");
  });

  it("approve through the CLI: the maintainer's reply reaches the requester", async () => {
    const root = makeChatRoot();
    await chat(root, ["init", "g", "--maintainer", "mia"]);
    const request = await chat(root, [
      "post",
      "g",
      "--from",
      "alice",
      "--title",
      "Merge it",
      "--action",
      "merge",
    ]);
    expect(request.stdout).toContain("approval-required: Wait for mia's `approved` reply");
    const denied = await chat(root, ["approve", "g", "1", "--as", "alice"]);
    expect(denied.code).toBe(1);
    expect(denied.stderr).toContain("alice cannot approve");
    const approved = await chat(root, ["approve", "g", "1", "--as", "mia"]);
    expect(approved.code).toBe(0);
    expect(approved.stdout).toContain("Approved #1 (alice: Merge it) in g, as #2.");
    const none = await chat(root, ["approve", "g", "7", "--as", "mia", "--json"]);
    expect(parseJsonOutput<{ error: { code: string } }>(none).error.code).toBe("message_not_found");
  });
});
