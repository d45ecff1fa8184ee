import type { ToolLists } from "../agents/adapter.js";

/**
 * The tools a task's agent gets, as the delegation reference resolves a bounded target's: its own lists
 * (its `[agents.<id>]` ones, narrowed by its risk profile's), and for a bounded child the caller's tools
 * as the ceiling — the two allow-lists intersected, never refused; the exclusions added up. An empty
 * intersection is not an error: the agent runs without tools (`emptied`), as the reference gives such a
 * target a turn with none.
 */
export function resolveTools(
  agent: ToolLists,
  profile: ToolLists,
  inherited: ToolLists | undefined,
): { tools: ToolLists; emptied: boolean } {
  const own = intersect(agent.allowed, profile.allowed);
  const allowed = inherited ? intersect(inherited.allowed, own) : own;
  const excluded = [...new Set([...(inherited?.excluded ?? []), ...agent.excluded, ...profile.excluded])];
  const lists = [agent.allowed, profile.allowed, inherited?.allowed].filter(
    (list) => list !== null && list !== undefined,
  );
  const emptied =
    allowed !== null && allowed.length === 0 && lists.filter((list) => list.length > 0).length >= 2;
  return { tools: { allowed, excluded }, emptied };
}

/** Two allow-lists as one (null: no list). */
function intersect(a: string[] | null, b: string[] | null): string[] | null {
  if (a === null) return b;
  if (b === null) return a;
  return a.filter((tool) => b.includes(tool));
}
