import { mkdirSync } from "node:fs";
import type { Server } from "node:net";
import { join } from "node:path";
import { afterEach } from "vitest";
import { openEgress } from "../../src/engine/conductor/task-egress.js";
import type { EventWriter } from "../../src/engine/store/event-log.js";
import type { TaskPlan } from "../../src/engine/store/task-plan.js";
import { tempDir } from "../helpers/repo.js";

/** What a suite's tests open, closed after each test (the last opened first). */
export function closedAfterEach(): (() => void)[] {
  const closers: (() => void)[] = [];
  afterEach(() => {
    for (const close of closers.splice(0).reverse()) close();
  });
  return closers;
}

/** Start `server` on a free port of the loopback, closed (its connections too) after the test. */
export async function listening(server: Server, closers: (() => void)[]): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  closers.push(() => {
    (server as Server & { closeAllConnections?(): void }).closeAllConnections?.();
    server.close();
  });
  return (server.address() as { port: number }).port;
}

/**
 * A task's egress proxy as its conductor opens it, in a project of its own, allowing `egress`: the events it
 * records counted, the lines it logs kept.
 */
export async function countingEgress(
  id: string,
  egress: string[],
  closers: (() => void)[],
): Promise<{ proxy: { folder: string }; events(): number; lines: string[] }> {
  const root = tempDir("caesar-egress-lab-");
  mkdirSync(join(root, ".caesar"), { recursive: true });
  let events = 0;
  const lines: string[] = [];
  const open = await openEgress(
    root,
    id,
    { sandbox: { backend: "bwrap", egress } } as unknown as TaskPlan,
    {
      append: async () => {
        events++;
      },
    } as unknown as EventWriter,
    (line) => lines.push(line),
  );
  if (!open) throw new Error("no proxy");
  closers.push(() => open.close());
  return { proxy: open.door, events: () => events, lines };
}
