import { DeliverPolicy } from "@nats-io/jetstream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Cluster, connectCluster } from "../../src/cluster/connection.js";
import { HEADER_COUNTER, LOG_STREAM, logFilter } from "../../src/cluster/names.js";
import { Outbox } from "../../src/cluster/outbox.js";
import { ensureInfrastructure } from "../../src/cluster/setup.js";
import { accessTo, freePort, NatsServer, requireNatsServer, tempDir } from "../helpers/cluster.js";

const NATS_SERVER = requireNatsServer();

describe.skipIf(!NATS_SERVER)("a worker's outbox", () => {
  let server: NatsServer;
  let cluster: Cluster;

  beforeAll(async () => {
    server = new NatsServer(NATS_SERVER!, await freePort(), tempDir("caesar-outbox-"));
    await server.start();
    cluster = await connectCluster(accessTo(server.url), "test");
    await ensureInfrastructure(cluster);
  });

  afterAll(async () => {
    await cluster?.close();
    await server?.stop();
  });

  it("stores every message once, in order, across a server restart", async () => {
    const outbox = new Outbox(cluster.js, "t_outbox01", 1, "w1");
    for (let i = 0; i < 40; i++) outbox.publish("event", JSON.stringify({ i }));
    await outbox.flush();
    const restarting = server.restart(1_000);
    // Published while the server is away: held, then sent.
    for (let i = 40; i < 80; i++) outbox.publish("event", JSON.stringify({ i }));
    await restarting;
    const last = await outbox.flush();
    expect(last).toBeGreaterThan(0);

    const consumer = await cluster.js.consumers.get(LOG_STREAM, {
      filter_subjects: logFilter("t_outbox01"),
      deliver_policy: DeliverPolicy.All,
    });
    const seen: { i: number; n: number }[] = [];
    while (seen.length < 80) {
      const message = await consumer.next({ expires: 5_000 });
      if (!message) break;
      seen.push({ i: message.json<{ i: number }>().i, n: Number(message.headers?.get(HEADER_COUNTER)) });
    }
    expect(seen.map((s) => s.i)).toEqual(Array.from({ length: 80 }, (_, i) => i));
    expect(seen.map((s) => s.n)).toEqual(Array.from({ length: 80 }, (_, i) => i + 1));
    expect(await consumer.next({ expires: 1_000 })).toBeNull();
  }, 120_000);

  it("publishes nothing more once closed (a claim lost)", async () => {
    const outbox = new Outbox(cluster.js, "t_outbox02", 1, "w1");
    outbox.close();
    outbox.publish("event", "{}");
    expect(await outbox.flush()).toBe(0);
  });
});
