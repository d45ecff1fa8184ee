import type {
  ApproveResult,
  ChannelSummary,
  ChatMessage,
  ClaimResult,
  OpenTaskResult,
  PostResult,
  Roster,
  SkippedFile,
} from "../chat/index.js";

/** Human renderings of chat results (ASCII only, so any terminal and locale shows them). */

export function renderMessage(message: ChatMessage): string {
  const to = message.to.join(", ");
  const facts = [message.status, message.reply_to === undefined ? "" : `re #${message.reply_to}`, message.ts];
  const action = message.extra.action === undefined ? "" : ` action=${message.extra.action}`;
  const lines = [
    `#${message.seq} ${message.from} -> ${to}: ${message.title}`,
    `    [${facts.filter(Boolean).join(", ")}]${action}`,
  ];
  const body = message.body.replace(/\s+$/, "");
  if (body !== "") lines.push("", ...body.split("\n").map((line) => (line === "" ? "" : `    ${line}`)));
  for (const warning of message.warnings) lines.push(`    (warning: ${warning})`);
  return lines.join("\n");
}

export function renderMessages(messages: ChatMessage[]): string {
  return messages.map(renderMessage).join("\n\n");
}

export function renderSkipped(skipped: SkippedFile[], pending?: SkippedFile): string[] {
  const lines = skipped.map((file) => `skipped ${file.file}: it ${file.problem}`);
  if (pending !== undefined)
    lines.push(
      `waiting for ${pending.file}: it ${pending.problem}; the next read delivers it and what follows`,
    );
  return lines;
}

export function renderPost(result: PostResult): string {
  const lines = [`Posted #${result.seq} to ${result.channel} (${result.file}).`];
  if (result.governance) lines.push(`${result.governance.band}: ${result.governance.next}`);
  return lines.join("\n");
}

export function renderChannels(channels: ChannelSummary[], root: string): string {
  if (channels.length === 0) return `No channels in ${root}. Create one with \`caesar chat init <channel>\`.`;
  const width = Math.max(...channels.map((channel) => channel.channel.length));
  const rows = channels.map((channel) => {
    const count = `${channel.messages} msg`.padEnd(9);
    const unread = channel.unread === undefined ? "" : `${channel.unread} unread  `;
    const about = channel.problem ?? channel.topic;
    const last = channel.last ? `last #${channel.last.seq} ${channel.last.from}: ${channel.last.title}` : "";
    return `  ${channel.channel.padEnd(width)}  ${count}${unread}${[about, last].filter(Boolean).join(" | ")}`;
  });
  return [`Channels in ${root}:`, ...rows].join("\n").replace(/ +$/gm, "");
}

export function renderRoster(roster: Roster): string {
  const lines = [`${roster.channel}${roster.topic ? ` - ${roster.topic}` : ""} (${roster.max_seq} messages)`];
  lines.push(`  members: ${roster.members.length > 0 ? roster.members.join(", ") : "(none declared)"}`);
  if (roster.maintainer !== undefined) {
    lines.push(`  maintainer: ${roster.maintainer} (veto window ${roster.veto_window_s ?? 0} s)`);
    const bands = Object.entries(roster.approval_bands ?? {}).map(([action, band]) => `${action}=${band}`);
    lines.push(`  approval bands: ${bands.join(", ") || "(none: everything is auto)"}`);
  }
  const posters = Object.entries(roster.posters).map(([agent, count]) => `${agent} (${count})`);
  lines.push(`  posted: ${posters.join(", ") || "(nobody yet)"}`);
  const cursors = Object.entries(roster.cursors).map(([agent, seq]) => `${agent} at #${seq}`);
  lines.push(`  read: ${cursors.join(", ") || "(nobody yet)"}`);
  if (roster.tasks.length > 0) lines.push(`  open tasks: ${roster.tasks.join(", ")}`);
  for (const claim of roster.claims)
    lines.push(`  claim: ${claim.marker} by ${claim.agent} ${claim.ts}`.trimEnd());
  return lines.join("\n");
}

export function renderClaim(result: ClaimResult, as: string): string {
  if (result.claimed) return `${as} claimed ${result.marker} in ${result.channel} (now ${result.file}).`;
  if (result.reason === "missing")
    return `Lost: there is no ${result.marker} in ${result.channel} (never opened, or claimed and renamed). Open it with \`caesar chat task ${result.channel} ${result.marker}\`, or pick another task.`;
  const holder = result.holder
    ? `${result.holder.agent}${result.holder.ts ? ` (${result.holder.ts})` : ""}`
    : "someone";
  return `Lost: ${result.marker} in ${result.channel} is already claimed by ${holder}. Pick another task.`;
}

export function renderOpenTask(result: OpenTaskResult): string {
  return `Opened ${result.marker} in ${result.channel}; an agent takes it with \`caesar chat claim ${result.channel} ${result.marker} --as <agent>\`.`;
}

export function renderApprove(result: ApproveResult): string {
  const verb = result.status === "vetoed" ? "Vetoed" : "Approved";
  return `${verb} #${result.target.seq} (${result.target.from}: ${result.target.title}) in ${result.channel}, as #${result.seq}.`;
}
