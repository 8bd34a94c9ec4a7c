import { owner } from "@mcp-tasks/core";
import { type OwnerScope, ownerScope } from "@mcp-tasks/core/store";
import { afterAll, describe, expect, it } from "vitest";
import { createPostgresTaskStore } from "../src/index.js";
import {
  connectionsNamed,
  DATABASE_URL,
  dropSchemas,
  freshSchemaName,
  migrateSchema,
} from "./helpers.js";

const ALICE = owner({ principalId: "alice", tenantId: "acme" });
const SCOPE = ownerScope(ALICE, { requireOwner: false }) as OwnerScope;
const schemas: string[] = [];

afterAll(() => dropSchemas(schemas));

let n = 0;
const newTask = () => ({
  taskId: `read-pool-${process.pid}-${n++}`,
  era: "2026-07-28" as const,
  request: { toolName: "slow_compute", arguments: { n } },
  ttlMs: 3_600_000,
  ttlAnchor: "creation" as const,
  pollIntervalMs: 100,
});

describe("readPoolSize: polls on their own pool", () => {
  it("rejects a size that is not a non-negative whole number, opening nothing", async () => {
    for (const readPoolSize of [-1, 1.5, Number.NaN]) {
      await expect(
        createPostgresTaskStore({ url: DATABASE_URL, schema: "public", readPoolSize }),
      ).rejects.toThrow(TypeError);
    }
  });

  for (const readPoolSize of [0, 1, 2]) {
    it(`readPoolSize ${readPoolSize}: every get after a write returned sees that write`, async () => {
      const schema = freshSchemaName("rp");
      schemas.push(schema);
      await migrateSchema(schema);
      const store = await createPostgresTaskStore({
        url: DATABASE_URL,
        schema,
        poolSize: 4,
        readPoolSize,
      });
      try {
        const tasks = await Promise.all(
          Array.from({ length: 20 }, () => store.create(newTask(), SCOPE)),
        );
        // Gets issued right after each write resolves, many in flight (pipelined on the
        // read pool), each must see its write.
        await Promise.all(
          tasks.map(async (task, i) => {
            expect((await store.get(task.taskId, SCOPE)).status).toBe("working");
            const message = `step ${i}`;
            await store.setStatusMessage(task.taskId, SCOPE, message);
            expect((await store.get(task.taskId, SCOPE)).statusMessage).toBe(message);
            await store.complete(task.taskId, SCOPE, { content: [] });
            const done = await store.get(task.taskId, SCOPE);
            expect(done.status).toBe("completed");
            expect(done.outcome).toEqual({ kind: "result", result: { content: [] } });
          }),
        );
      } finally {
        await store.close();
      }
    });
  }

  it("close() while polls wait for the read pool's connection leaves no connection open", async () => {
    const schema = freshSchemaName("rp");
    schemas.push(schema);
    await migrateSchema(schema);
    const applicationName = `read-pool-close-${process.pid}`;
    const store = await createPostgresTaskStore({
      url: DATABASE_URL,
      schema,
      applicationName,
      readPoolSize: 1,
    });
    // One poll a turn: the first opens the read pool's connection, the next wait for it.
    const polls: Promise<string>[] = [];
    for (let i = 0; i < 10; i++) {
      polls.push(
        store.get(`missing-${i}`, SCOPE).then(
          () => "found",
          (error: { code?: string }) => error.code ?? "no code",
        ),
      );
      await new Promise((r) => setImmediate(r));
    }
    await store.close();
    // Each answered (a missing task) or refused as the store closed; none left hanging.
    for (const outcome of await Promise.all(polls)) {
      expect(["not_found_or_unauthorized", "store_unavailable"]).toContain(outcome);
    }
    // Before postgres.js was patched for it: one `-read` connection, idle, for good (the
    // process never exited).
    expect(await connectionsNamed(applicationName)).toBe(0);
  });
});
