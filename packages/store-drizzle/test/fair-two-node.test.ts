// Fair scheduling across two nodes on PostgreSQL: two stores with their own pools (as two
// server nodes would have) and a runner on each. The per-owner running cap is enforced by
// the claim itself, so the two nodes together never exceed it, and another owner's task
// runs while one owner's flood waits at its cap.
import {
  owner,
  QUEUED_OWNER_LIMIT_MESSAGE,
  type TaskRecord,
  TaskRunner,
  TaskService,
  type ToolDefinition,
} from "@mcp-tasks/core";
import { type OwnerScope, ownerScope } from "@mcp-tasks/core/store";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createPostgresTaskStore, type DrizzleTaskStore } from "../src/index.js";
import { DATABASE_URL, dropSchemas, freshSchemaName, migrateSchema, sleep } from "./helpers.js";

const ALICE = owner({ principalId: "alice", tenantId: "acme" });
const BOB = owner({ principalId: "bob", tenantId: "acme" });
// The second test's owners: the first leaves claimed tasks of Alice and Bob behind.
const CAROL = owner({ principalId: "carol", tenantId: "acme" });
const DAVE = owner({ principalId: "dave", tenantId: "acme" });
const scopeOf = (o: typeof ALICE) => ownerScope(o, { requireOwner: false }) as OwnerScope;
const era = "2026-07-28" as const;

let n = 0;
const newTask = () => ({
  taskId: `fair-${process.pid}-${Date.now()}-${n++}`,
  era,
  request: { toolName: "job", arguments: {} },
  ttlMs: 3_600_000,
  ttlAnchor: "creation" as const,
  pollIntervalMs: 100,
});

async function until<T>(read: () => Promise<T>, done: (value: T) => boolean): Promise<T> {
  for (let i = 0; i < 1000; i++) {
    const value = await read();
    if (done(value)) return value;
    await sleep(20);
  }
  throw new Error("timed out");
}

describe("fair scheduling on two nodes (PostgreSQL, two pools)", () => {
  const schema = freshSchemaName("f");
  let a: DrizzleTaskStore;
  let b: DrizzleTaskStore;
  const runners: TaskRunner[] = [];

  beforeAll(async () => {
    await migrateSchema(schema);
    a = await createPostgresTaskStore({ url: DATABASE_URL, schema, poolSize: 8 });
    b = await createPostgresTaskStore({ url: DATABASE_URL, schema, poolSize: 8 });
  });

  afterEach(async () => {
    for (const runner of runners.splice(0)) {
      runner.stopClaiming();
      runner.abortAll();
      await runner.releaseLeases();
    }
  });

  afterAll(async () => {
    await a?.close();
    await b?.close();
    await dropSchemas([schema]);
  });

  it("claims racing on both nodes never take an owner past maxRunningPerOwner", async () => {
    for (let i = 0; i < 40; i++) await a.create(newTask(), scopeOf(ALICE));
    for (let i = 0; i < 5; i++) await b.create(newTask(), scopeOf(BOB));
    const claims = Array.from({ length: 40 }, (_, i) =>
      (i % 2 === 0 ? a : b).claim(`node-${i % 2}`, {
        limit: 3,
        leaseMs: 60_000,
        maxRunningPerOwner: 4,
      }),
    );
    const claimed = (await Promise.all(claims)).flat();
    expect(claimed.filter((t) => t.owner.principalId === "alice")).toHaveLength(4);
    expect(claimed.filter((t) => t.owner.principalId === "bob")).toHaveLength(4);
    expect(new Set(claimed.map((t) => t.taskId)).size).toBe(claimed.length);
  });

  it("two runners hold one owner's flood at its cap; another owner's task runs meanwhile", async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    let running = 0;
    let peak = 0;
    const job: ToolDefinition = {
      name: "flood_or_short",
      inputSchema: { type: "object" },
      taskMode: "optional",
      run: async (args) => {
        if (args.long !== true) return { content: [{ type: "text", text: "short" }] };
        running += 1;
        peak = Math.max(peak, running);
        await gate;
        running -= 1;
        return { content: [{ type: "text", text: "long" }] };
      },
    };
    const node = (store: DrizzleTaskStore, holder: string) => {
      const service = new TaskService({ store });
      const runner = new TaskRunner({
        service,
        tools: [job],
        concurrency: 8,
        maxRunningPerOwner: 3,
        scanIntervalMs: 50,
        lease: { holder },
        onError: () => {},
      });
      runners.push(runner);
      return { service, runner };
    };
    const x = node(a, `fair-a-${process.pid}`);
    const y = node(b, `fair-b-${process.pid}`);
    const flood: TaskRecord[] = [];
    for (let i = 0; i < 24; i++) {
      const { runner } = i % 2 === 0 ? x : y;
      flood.push(
        await runner.start(CAROL, {
          era,
          request: { toolName: "flood_or_short", arguments: { long: true } },
        }),
      );
    }
    // Created at once while Alice was under her cap, then queued saying why.
    expect(flood.filter((t) => t.execution.holder !== null).length).toBeLessThanOrEqual(3);
    expect(flood.at(-1)?.statusMessage).toBe(QUEUED_OWNER_LIMIT_MESSAGE);
    await until(
      async () => peak,
      (p) => p === 3,
    );
    const short = await y.runner.start(DAVE, {
      era,
      request: { toolName: "flood_or_short", arguments: {} },
    });
    await until(
      () => x.service.get(DAVE, short.taskId),
      (t) => t.status === "completed",
    );
    // The flood still holds exactly its cap, across both nodes, as the database says too.
    const held = await a.list(scopeOf(CAROL), { statuses: ["working"], limit: 100 });
    expect(held.tasks.filter((t) => t.execution.holder !== null)).toHaveLength(3);
    expect(x.runner.active + y.runner.active).toBe(3);
    release();
    for (const t of flood) {
      await until(
        () => y.service.get(CAROL, t.taskId),
        (r) => r.status === "completed",
      );
    }
    expect(peak).toBe(3);
  });
});
