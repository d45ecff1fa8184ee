import type { EventBody } from "../../src/protocol/event.js";

type ToolEvent = Extract<EventBody, { type: "tool_use" }>;

export function toolEvents(events: EventBody[]): ToolEvent[] {
  return events.filter((event): event is ToolEvent => event.type === "tool_use");
}

/**
 * Problems with tool pairing: every `started` has exactly one end with the same id, after it; no end
 * without a start; no id started twice. An empty list means the stream was translated without loss.
 */
export function pairingProblems(events: EventBody[]): string[] {
  const problems: string[] = [];
  const open = new Map<string, number>();
  const ended = new Set<string>();
  toolEvents(events).forEach((event, index) => {
    const id = event.id ?? "";
    if (event.status === "started") {
      if (open.has(id) || ended.has(id)) problems.push(`tool ${id} started twice`);
      open.set(id, index);
    } else {
      if (!open.has(id)) problems.push(`tool ${id} ended (${event.status}) without a start`);
      open.delete(id);
      ended.add(id);
    }
  });
  for (const id of open.keys()) problems.push(`tool ${id} started and never ended`);
  return problems;
}

/** The first tool whose name matches, and its end: for "started then succeeded" assertions. */
export function toolRun(
  events: EventBody[],
  name: RegExp,
): { start?: ToolEvent; end?: ToolEvent; order: number[] } {
  const tools = toolEvents(events);
  const start = tools.find((event) => event.status === "started" && name.test(event.tool));
  const end = start ? tools.find((event) => event.status !== "started" && event.id === start.id) : undefined;
  return {
    start,
    end,
    order: [start ? events.indexOf(start) : -1, end ? events.indexOf(end) : -1],
  };
}

/** Shell tools as each CLI names them. */
export const SHELL_TOOL = /^(shell|Bash|bash|run_shell_command)$/;
