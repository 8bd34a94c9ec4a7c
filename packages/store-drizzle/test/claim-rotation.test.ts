// A claim looks at a bounded number of queues (an owner's queued tasks of one tool,
// MAX_CLAIM_QUEUES), and the next claim goes on from where it stopped, round the end to the
// start: on PostgreSQL and PGlite, with more queues than that bound before it that no claim
// can take from (tools this node does not run, owners at their cap), a queued task is taken
// by the second claim. From the first queue every time, it waited as long as those queues
// did: for good, with workers of those tools down or those owners' runs lost.
import { owner } from "@mcp-tasks/core";
import { type OwnerScope, ownerKey, ownerScope } from "@mcp-tasks/core/store";
import { afterAll, describe, expect, it } from "vitest";
import type { DrizzleTaskStore } from "../src/index.js";
import { MAX_CLAIM_QUEUES } from "../src/plans/queue.js";
import { schemaStoreBackends } from "./helpers.js";

// Its owner key ("7:zzzzzzz|4:acme|~") sorts after every bulk owner's ("6:o00001|4:acme|~", …).
const ZED = owner({ principalId: "zzzzzzz", tenantId: "acme" });
const scopeOf = (o: typeof ZED) => ownerScope(o, { requireOwner: false }) as OwnerScope;
/** More queues than one claim looks at, all before ZED's. */
const QUEUES = MAX_CLAIM_QUEUES + 200;

const { backends, close } = schemaStoreBackends("cr");
afterAll(close);

/**
 * One queued task of `tool` for each of QUEUES owners, in bulk; with `running`, each owner
 * also has one task of it held by a worker that is gone (its lease an hour off).
 */
async function bulkQueues(
  store: DrizzleTaskStore,
  schema: string,
  tool: string,
  running: boolean,
): Promise<void> {
  const rows = (prefix: string, held: boolean) =>
    store.query(
      `INSERT INTO "${schema}".mcp_tasks (id, owner_key, owner_principal, owner_tenant, era,
         status, request, tool_name, ttl_ms, ttl_anchor, created_at, updated_at, payload_bytes,
         lease_holder, lease_expires_at, attempt, fencing_token)
       SELECT '${prefix}-' || g, '6:o' || lpad(g::text, 5, '0') || '|4:acme|~',
         'o' || lpad(g::text, 5, '0'), 'acme', '2026-07-28', 'working',
         jsonb_build_object('toolName', $1::text, 'arguments', '{}'::jsonb),
         $1::text, 3600000, 'creation', now(), now(), 2,
         ${held ? "'gone', now() + interval '1 hour', 1, 1" : "NULL, NULL, 0, 0"}
       FROM generate_series(1, ${QUEUES}) AS g`,
      [tool],
    );
  if (running) await rows("held", true);
  await rows("queued", false);
  await store.query(`ANALYZE "${schema}".mcp_tasks`);
}

const task = (taskId: string, toolName: string) => ({
  taskId,
  era: "2026-07-28" as const,
  request: { toolName, arguments: {} },
  ttlMs: 3_600_000,
  ttlAnchor: "creation" as const,
  pollIntervalMs: null,
});

for (const [name, open] of backends) {
  describe(`more queues than one claim looks at (${name})`, () => {
    it("another tool's queues before it: a node's own task is taken by its second claim", async () => {
      const { store, schema } = await open();
      try {
        expect(
          ownerKey(ZED) >
            ownerKey(
              owner({ principalId: `o${String(QUEUES).padStart(5, "0")}`, tenantId: "acme" }),
            ),
        ).toBe(true);
        await bulkQueues(store, schema, "x", false);
        for (const limits of [{}, { maxRunningPerOwner: 4, maxWaitingPerOwner: 4 }]) {
          const mine = await store.create(task(`zed-y-${Date.now()}`, "y"), scopeOf(ZED));
          const claim = () =>
            store.claim("node-y", { limit: 2, leaseMs: 60_000, toolNames: ["y"], ...limits });
          // The first claim (from the first queue, or from where the last one stopped) may
          // see only queues of `x`; the next one goes on past them.
          const taken = [...(await claim()), ...(await claim())];
          expect(taken.map((t) => t.taskId)).toEqual([mine.taskId]);
        }
      } finally {
        await store.close();
      }
    }, 120_000);

    it("owners at their cap before it: another owner's task is taken by the second claim", async () => {
      const { store, schema } = await open();
      try {
        await bulkQueues(store, schema, "job", true);
        const mine = await store.create(task("zed-job", "job"), scopeOf(ZED));
        const claim = () =>
          store.claim("node-1", { limit: 2, leaseMs: 60_000, maxRunningPerOwner: 1 });
        // The first claim looks at the first MAX_CLAIM_QUEUES queues: all their owners are
        // at their cap of 1.
        expect(await claim()).toEqual([]);
        expect((await claim()).map((t) => t.taskId)).toEqual([mine.taskId]);
        // And the walk goes round: nothing more to take, however many claims.
        for (let i = 0; i < 3; i++) expect(await claim()).toEqual([]);
      } finally {
        await store.close();
      }
    }, 120_000);
  });
}
