import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Cluster, connectCluster } from "../../src/cluster/connection.js";
import { TASKS_STREAM } from "../../src/cluster/names.js";
import { ensureAgentConsumer, ensureInfrastructure } from "../../src/cluster/setup.js";
import { accessTo, freePort, NatsServer, requireNatsServer, tempDir } from "../helpers/cluster.js";

const NATS_SERVER = requireNatsServer();

describe.skipIf(!NATS_SERVER)("the queue's consumers on a real JetStream", () => {
  let server: NatsServer;
  let cluster: Cluster;

  beforeAll(async () => {
    server = new NatsServer(NATS_SERVER!, await freePort(), tempDir("caesar-setup-"));
    await server.start();
    cluster = await connectCluster(accessTo(server.url), "test");
    await ensureInfrastructure(cluster);
  });

  afterAll(async () => {
    await cluster?.close();
    await server?.stop();
  });

  it("follows a changed heartbeat_timeout without the consumer deleted by hand", async () => {
    const name = await ensureAgentConsumer(cluster, "q1", "nap", 6_000);
    expect((await cluster.jsm.consumers.info(TASKS_STREAM, name)).config.ack_wait).toBe(6_000_000_000);
    expect(await ensureAgentConsumer(cluster, "q1", "nap", 45_000)).toBe(name);
    expect((await cluster.jsm.consumers.info(TASKS_STREAM, name)).config.ack_wait).toBe(45_000_000_000);
  });
});
