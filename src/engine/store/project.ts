import { join } from "node:path";

/** Where a project keeps caesar's files, under `<root>/.caesar/`. */
export interface ProjectPaths {
  root: string;
  caesar: string;
  tasks: string;
  worktrees: string;
  state: string;
  slots: string;
  chat: string;
  config: string;
  localConfig: string;
  roles: string;
}

export function projectPaths(root: string): ProjectPaths {
  const caesar = join(root, ".caesar");
  return {
    root,
    caesar,
    tasks: join(caesar, "tasks"),
    worktrees: join(caesar, "wt"),
    state: join(caesar, "state"),
    slots: join(caesar, "state", "slots"),
    chat: join(caesar, "chat"),
    config: join(caesar, "config.toml"),
    localConfig: join(caesar, "config.local.toml"),
    roles: join(caesar, "roles"),
  };
}
