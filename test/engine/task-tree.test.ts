import { describe, expect, it } from "vitest";
import { buildTaskTrees, flattenTree, treeOfTask } from "../../src/engine/follow/task-tree.js";
import { type TaskState, TaskStateSchema } from "../../src/engine/store/state.js";

function task(id: string, parent: string | null, created: number): TaskState {
  return TaskStateSchema.parse({
    version: 1,
    id,
    phase: "finished",
    created_at: new Date(created).toISOString(),
    updated_at: new Date(created).toISOString(),
    agent: "reference",
    objective: id,
    mode: "read-only",
    isolation: "inplace",
    root: "/p",
    workspace: "/p",
    parent_id: parent,
  });
}

const ids = (nodes: { id: string }[]) => nodes.map((node) => node.id);

describe("delegation trees from task states", () => {
  it("hangs each task under its parent, children in the order they were created; an absent parent makes a root", () => {
    const states = [
      task("t_c", "t_a", 3),
      task("t_a", null, 1),
      task("t_b", "t_a", 2),
      task("t_d", "t_b", 4),
      task("t_e", "t_gone", 5),
    ];
    const roots = buildTaskTrees(states);
    expect(ids(roots)).toEqual(["t_a", "t_e"]);
    expect(ids(roots[0]!.children)).toEqual(["t_b", "t_c"]);
    expect(ids(flattenTree(roots[0]!))).toEqual(["t_a", "t_b", "t_d", "t_c"]);
    expect(treeOfTask(states, "t_d")?.id).toBe("t_a");
    expect(treeOfTask(states, "t_nope")).toBeUndefined();
  });

  it("never loses a task to a damaged record: a cycle of parents shows as roots", () => {
    const states = [task("t_x", "t_y", 1), task("t_y", "t_x", 2), task("t_self", "t_self", 3)];
    const all = buildTaskTrees(states).flatMap(flattenTree);
    expect(ids(all).sort()).toEqual(["t_self", "t_x", "t_y"]);
  });
});
