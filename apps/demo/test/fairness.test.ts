// Issue #21, the scheduler's part, replayed over real HTTP: an owner floods hour-long
// `slow_compute` tasks (more than the node's slots); the per-owner running cap holds the
// flood at its share, and another owner's short task completes meanwhile. In both eras
// (2026-07-28 over the wire, 2025-11-25 with the real SDK client), on the memory store and
// on PostgreSQL, with the demo's default cap (a quarter of the concurrency).
import { QUEUED_OWNER_LIMIT_MESSAGE, type TaskStore } from "@mcp-tasks/core";
import { MemoryTaskStore } from "@mcp-tasks/store-memory";
import { Client as Sdk1Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport as Sdk1Transport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { CreateTaskResultSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { openStore } from "../src/store.js";
import { DATABASE_URL, dropSchema, schemaName } from "./helpers/process.js";
import { ALICE, BOB, startDemo } from "./helpers/server.js";
import { pollTask, rpc } from "./helpers/wire.js";

/** The node's slots; the default cap is a quarter of them. */
const CONCURRENCY = 8;
const CAP = CONCURRENCY / 4;
/** Bound on polls 25 ms apart: generous for a loaded CI machine, never an hour-long task. */
const MAX_POLLS = 1200;
/** More than the node's slots, as in the issue. */
const FLOOD = CONCURRENCY + 4;
const HOUR = 3600;

type Demo = Awaited<ReturnType<typeof startDemo>>;

const STORES: {
  name: string;
  open: () => Promise<{ store: TaskStore; drop: () => Promise<void> }>;
}[] = [
  {
    name: "memory",
    open: async () => ({
      store: new MemoryTaskStore({ sweepIntervalMs: 0 }),
      drop: async () => {},
    }),
  },
  {
    name: "postgres",
    open: async () => {
      const schema = schemaName("fair");
      const opened = await openStore({ kind: "postgres", databaseUrl: DATABASE_URL, schema });
      return { store: opened.store, drop: () => dropSchema(schema) };
    },
  },
];

async function connectSdk1(url: string, token: string): Promise<Sdk1Client> {
  const client = new Sdk1Client({ name: "sdk1-fairness", version: "1.0.0" }, { capabilities: {} });
  await client.connect(
    new Sdk1Transport(new URL(url), {
      requestInit: { headers: { authorization: `Bearer ${token}` } },
    }),
  );
  return client;
}

describe.each(STORES)("an owner's flood cannot starve another owner ($name)", ({ open }) => {
  let demo: Demo;
  let drop: () => Promise<void>;
  /** The flood of the current test, cancelled after it. */
  let flood: string[] = [];

  beforeAll(async () => {
    const opened = await open();
    drop = opened.drop;
    demo = await startDemo({
      store: opened.store,
      legacy: true,
      requireAuth: true,
      concurrency: CONCURRENCY,
      ...(opened.store instanceof MemoryTaskStore ? {} : { lease: { holder: "fair-node" } }),
    });
  });

  afterEach(async () => {
    for (const taskId of flood) {
      await rpc(demo.url, "tasks/cancel", { taskId }, { token: ALICE });
    }
    for (const taskId of flood) await pollTask(demo.url, taskId, ALICE, undefined, MAX_POLLS);
    flood = [];
  });

  afterAll(async () => {
    await demo?.stop();
    await drop?.();
  });

  /** The flood holds exactly its cap of the node's slots, and the rest says why it waits. */
  async function expectFloodAtItsCap(): Promise<void> {
    const statuses = await Promise.all(
      flood.map(async (taskId) => {
        const { body } = await rpc(demo.url, "tasks/get", { taskId }, { token: ALICE });
        return String(body?.result?.statusMessage);
      }),
    );
    expect(statuses.filter((m) => m === QUEUED_OWNER_LIMIT_MESSAGE)).toHaveLength(FLOOD - CAP);
    expect(demo.app.runner.active).toBe(CAP);
  }

  it("2026-07-28: the other owner's short task completes while the flood holds its cap", async () => {
    for (let i = 0; i < FLOOD; i++) {
      const { body } = await rpc(
        demo.url,
        "tools/call",
        { name: "slow_compute", arguments: { seconds: HOUR, label: "flood" } },
        { token: ALICE },
      );
      flood.push(String(body?.result?.taskId));
    }
    await expectFloodAtItsCap();
    const { body } = await rpc(
      demo.url,
      "tools/call",
      { name: "slow_compute", arguments: { seconds: 0.2, label: "bob" } },
      { token: BOB },
    );
    const bobs = String(body?.result?.taskId);
    // Bounded: within seconds, not after an hour-long task.
    const done = await pollTask(demo.url, bobs, BOB, undefined, MAX_POLLS);
    expect(done.status).toBe("completed");
    await expectFloodAtItsCap();
  });

  it("2025-11-25: the other owner's short task completes while the flood holds its cap", async () => {
    const alice = await connectSdk1(demo.url, ALICE);
    const bob = await connectSdk1(demo.url, BOB);
    try {
      for (let i = 0; i < FLOOD; i++) {
        const created = await alice.request(
          {
            method: "tools/call",
            params: { name: "slow_compute", arguments: { seconds: HOUR, label: "flood" } },
          },
          CreateTaskResultSchema,
          { task: { ttl: 600_000 } },
        );
        flood.push(created.task.taskId);
      }
      await expectFloodAtItsCap();
      const created = await bob.request(
        {
          method: "tools/call",
          params: { name: "slow_compute", arguments: { seconds: 0.2, label: "bob" } },
        },
        CreateTaskResultSchema,
        { task: { ttl: 600_000 } },
      );
      let status = created.task.status;
      for (let i = 0; i < MAX_POLLS && status !== "completed"; i++) {
        await new Promise((resolve) => setTimeout(resolve, 25));
        status = (await bob.experimental.tasks.getTask(created.task.taskId)).status;
      }
      expect(status).toBe("completed");
      await expectFloodAtItsCap();
    } finally {
      await alice.close();
      await bob.close();
    }
  });
});
