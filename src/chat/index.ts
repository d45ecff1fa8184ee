/**
 * agent-chat (spec v0.1, sections 3-8, and the optional governance profile of section 9): channels
 * of markdown messages in a folder, read cursors, atomic sequence allocation and claiming, and a
 * token-free wait. Front ends (CLI, MCP) call these functions; nothing here knows about them.
 */
export {
  type ApprovalState,
  type ApprovalStatus,
  type ApproveResult,
  approveMessage,
  getApprovalStatus,
} from "./approve.js";
export { type ChannelRef, type InitOptions, initChannel, openChannel } from "./channel.js";
export {
  type ClaimedTask,
  type ClaimHolder,
  type ClaimResult,
  claimTask,
  findClaim,
  listClaims,
} from "./claim.js";
export { formatTimestamp } from "./clock.js";
export {
  type ChatContext,
  type ChatContextOptions,
  DEFAULT_LOCK_STALE_MS,
  makeChatContext,
} from "./context.js";
export { advanceCursor, readCursor } from "./cursor.js";
export { type GovernancePlan, NEEDS_APPROVAL } from "./governance.js";
export { type ChatMessage, isRelevantTo, parseMessage } from "./message.js";
export { APPROVAL_BANDS, type ApprovalBand, type ChannelMeta } from "./meta.js";
export { explainBadName, slugify, validateName } from "./names.js";
export { type OpenTaskResult, openTask } from "./open-task.js";
export { type PostInput, type PostResult, postMessage } from "./post.js";
export { type PeekResult, peekMessages, type ReadResult, readMessages, type SkippedFile } from "./read.js";
export { type ResolvedChatRoot, resolveChatRoot } from "./root.js";
export { type ChannelSummary, getRoster, listChannels, type Roster } from "./roster.js";
export { MAX_MESSAGE_BYTES } from "./scan.js";
export { acquireSeqLock, SEQ_LOCK } from "./seq-lock.js";
export { claimedFileName, normalizeTaskMarker } from "./task-marker.js";
export {
  DEFAULT_POLL_INTERVAL_MS,
  DEFAULT_WAIT_TIMEOUT_MS,
  type WaitResult,
  waitForMessages,
} from "./wait.js";
