import type { CaesarEvent } from "../../protocol/event.js";

function timeOf(event: CaesarEvent): number {
  const ms = Date.parse(event.at);
  return Number.isNaN(ms) ? Number.NEGATIVE_INFINITY : ms;
}

/**
 * Merge the event lists of several tasks into one, in time order. Each list keeps its own order (the
 * order of its file) even where its timestamps go backwards; ties go to the earlier list.
 */
export function mergeByTime<T>(lists: { items: CaesarEvent[]; tag: T }[]): { event: CaesarEvent; tag: T }[] {
  const heads = lists.map(() => 0);
  const merged: { event: CaesarEvent; tag: T }[] = [];
  for (;;) {
    let best = -1;
    for (let i = 0; i < lists.length; i++) {
      const event = lists[i]!.items[heads[i]!];
      if (event === undefined) continue;
      if (best === -1 || timeOf(event) < timeOf(lists[best]!.items[heads[best]!]!)) best = i;
    }
    if (best === -1) return merged;
    merged.push({ event: lists[best]!.items[heads[best]!]!, tag: lists[best]!.tag });
    heads[best] = heads[best]! + 1;
  }
}
