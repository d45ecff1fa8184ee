import { join } from "node:path";
import { CaesarError } from "../support/errors.js";
import { openChannel } from "./channel.js";
import { findClaim } from "./claim.js";
import { formatTimestamp } from "./clock.js";
import type { ChatContext } from "./context.js";
import { writeFileExclusive } from "./exclusive-file.js";
import { formatFrontmatter } from "./frontmatter.js";
import { validateName } from "./names.js";
import { withSeqLock } from "./seq-lock.js";
import { normalizeTaskMarker } from "./task-marker.js";

export interface OpenTaskResult {
  channel: string;
  marker: string;
  path: string;
}

/**
 * Open a task for others to claim: create its marker file, whole or not at all, under the channel's
 * lock. Refused when the marker exists, or when the task is claimed already (reopening is renaming the
 * claimed file back, by hand, on purpose).
 */
export async function openTask(
  ctx: ChatContext,
  channelName: string,
  rawMarker: string,
  options: { from: string; title?: string; body?: string },
): Promise<OpenTaskResult> {
  const marker = normalizeTaskMarker(rawMarker);
  const from = validateName(options.from, "agent");
  const channel = await openChannel(ctx, channelName);
  const path = join(channel.dir, marker);
  const title = (options.title ?? "").replace(/[\u0000-\u001f\u007f]+/g, " ").trim();
  const text = formatFrontmatter(
    [
      ["task", marker.slice("task-".length, -".md".length)],
      ["from", from],
      ["channel", channel.name],
      ["ts", formatTimestamp(ctx.now())],
      ["title", title === "" ? undefined : title],
    ],
    options.body ?? "",
  );
  return withSeqLock(channel.dir, { staleMs: ctx.lockStaleMs }, () => {
    const held = findClaim(channel.dir, marker);
    if (held !== undefined)
      throw new CaesarError(
        "task_claimed",
        `${marker} in "${channel.name}" is already claimed by ${held.holder.agent}.`,
        {
          detail: `Open the task under another id; to reopen this one, rename ${held.file} back to ${marker}.`,
        },
      );
    if (!writeFileExclusive(path, text))
      throw new CaesarError("task_exists", `${marker} is already open in "${channel.name}".`, {
        detail: `Claim it (\`caesar chat claim ${channel.name} ${marker} --as <agent>\`) or pick another id.`,
      });
    return { channel: channel.name, marker, path };
  });
}
