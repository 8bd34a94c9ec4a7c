// A backlog of 10,000 queued tasks from one owner delays another owner's new task by no more
// than one claim round (issue #21 §1), on PostgreSQL and PGlite: the backlog is inserted in
// bulk (one INSERT … SELECT), then one claim of a few tasks, with and without an owner limit,
// must take the other owner's task. The claim finds owners by a loose index scan, so the
// backlog's size does not matter; this proves it at the size the issue names.
import { owner } from "@mcp-tasks/core";
import { type OwnerScope, ownerKey, ownerScope } from "@mcp-tasks/core/store";
import { afterAll, describe, expect, it } from "vitest";
import { schemaStoreBackends } from "./helpers.js";

const ALICE = owner({ principalId: "alice", tenantId: "acme" });
const BOB = owner({ principalId: "bob", tenantId: "acme" });
const scopeOf = (o: typeof ALICE) => ownerScope(o, { requireOwner: false }) as OwnerScope;
const BACKLOG = 10_000;

const { backends, close } = schemaStoreBackends("fb");
afterAll(close);

for (const [name, open] of backends) {
  describe(`a 10,000-task backlog of one owner (${name})`, () => {
    it("delays another owner's new task by no more than one claim, capped or not", async () => {
      const { store, schema } = await open();
      try {
        // Alice's backlog, queued (no holder), oldest first; the counters as migration 0004.
        await store.query(
          `INSERT INTO "${schema}".mcp_tasks (id, owner_key, owner_principal, owner_tenant, era,
             status, request, tool_name, ttl_ms, ttl_anchor, created_at, updated_at, payload_bytes)
           SELECT 'backlog-' || g, $1::text, 'alice', 'acme', '2026-07-28', 'working',
             '{"toolName":"job","arguments":{}}'::jsonb, 'job', 3600000, 'creation',
             now(), now(), 2
           FROM generate_series(1, ${BACKLOG}) AS g`,
          [ownerKey(ALICE)],
        );
        await store.query(`ANALYZE "${schema}".mcp_tasks`);
        const task = {
          era: "2026-07-28" as const,
          request: { toolName: "job", arguments: {} },
          ttlMs: 3_600_000,
          ttlAnchor: "creation" as const,
          pollIntervalMs: null,
        };
        for (const limits of [{}, { maxRunningPerOwner: 4, maxWaitingPerOwner: 4 }]) {
          const bob = await store.create({ ...task, taskId: `bob-${Date.now()}` }, scopeOf(BOB));
          const claimed = await store.claim("node-1", { limit: 3, leaseMs: 60_000, ...limits });
          expect(claimed).toHaveLength(3);
          expect(claimed.map((t) => t.taskId)).toContain(bob.taskId);
          // The rest are Alice's oldest.
          expect(
            claimed
              .filter((t) => t.taskId !== bob.taskId)
              .every((t) => t.owner.principalId === "alice"),
          ).toBe(true);
        }
      } finally {
        await store.close();
      }
    }, 120_000);
  });
}
