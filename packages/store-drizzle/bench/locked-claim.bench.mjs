// The round trip of a claim under an owner limit, which runs after the claim lock (see
// `src/plans/locked.ts`): empty claims one after another on a store with one connection,
// warmed first with the store's usual statements (so the connection has them prepared, as
// in service). Reports p10 / p50 / p90 over LOCKED_CLAIMS claims (400). Everything the
// claim lock holds up waits this long per claim, on every node.
//
// Then the same with many owners at their cap, each with a backlog (a busy multi-tenant
// server): for each count of LOCKED_CLAIM_CAPPED_OWNERS (100,1000,5000), that many owners
// with 8 running tasks (held by a worker that is gone) and 2 queued, inserted in bulk; empty
// claims with a cap of 8, p50 / p90 of 50 after 10. A claim looks at each queue and counts
// its owner's running tasks, up to the 1,000 queues it looks at.
//
// Runs against dist/ (build first). PostgreSQL at DATABASE_URL, in a schema of its own that
// is dropped at the end.
//
//   node bench/locked-claim.bench.mjs
import { owner } from "@mcp-tasks/core";
import { ownerScope } from "@mcp-tasks/core/store";
import { createPostgresTaskStore, dropTaskSchema, migrate } from "../dist/index.js";
import { percentile } from "./percentile.mjs";

const URL = process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";
const CLAIMS = Number(process.env.LOCKED_CLAIMS ?? 400);
const WARMUP = 50;
const schema = `bench_locked_${process.pid}`;
const LIMITED = { leaseMs: 60_000, maxRunningPerOwner: 8 };
const CAPPED_OWNERS = (process.env.LOCKED_CLAIM_CAPPED_OWNERS ?? "100,1000,5000")
  .split(",")
  .filter((n) => n.length > 0)
  .map(Number);

const task = (taskId) => ({
  taskId,
  era: "2026-07-28",
  request: { toolName: "echo", arguments: { text: "hello" } },
  ttlMs: 60_000,
  ttlAnchor: "creation",
  pollIntervalMs: 500,
});

await migrate(URL, { schema });
const store = await createPostgresTaskStore({ url: URL, schema, poolSize: 1, readPoolSize: 0 });
try {
  const scope = ownerScope(owner({ principalId: "bench" }), { requireOwner: false });
  // The statements a worker's connection runs: create, get, claim, complete, list.
  for (let i = 0; i < WARMUP; i++) {
    const created = await store.create(task(`w${i}`), scope);
    await store.get(created.taskId, scope);
    const [claimed] = await store.claim("bench", { ...LIMITED, limit: 1 });
    if (claimed !== undefined) {
      const fence = { holder: "bench", fencingToken: claimed.execution.fencingToken };
      await store.complete(claimed.taskId, { ...scope, fence }, { content: [] });
    }
    await store.list(scope, { limit: 10 });
  }
  const times = [];
  for (let i = 0; i < CLAIMS; i++) {
    const t0 = performance.now();
    await store.claim("bench", { ...LIMITED, limit: 4 });
    times.push(performance.now() - t0);
  }
  times.sort((a, b) => a - b);
  const at = (p) => percentile(times, p).toFixed(3);
  console.log(
    `empty claims under an owner limit, one connection, ${CLAIMS} in a row: p10 ${at(0.1)} / p50 ${at(0.5)} / p90 ${at(0.9)} ms`,
  );
  for (const owners of CAPPED_OWNERS) {
    await store.query(`TRUNCATE "${schema}".mcp_tasks`);
    for (const [prefix, held, perOwner] of [
      ["held", true, LIMITED.maxRunningPerOwner],
      ["queued", false, 2],
    ]) {
      await store.query(
        `INSERT INTO "${schema}".mcp_tasks (id, owner_key, owner_principal, era, status, request,
           tool_name, ttl_ms, ttl_anchor, created_at, updated_at, payload_bytes, lease_holder,
           lease_expires_at, attempt, fencing_token)
         SELECT '${prefix}-' || g || '-' || r, '6:o' || lpad(g::text, 5, '0') || '|~|~',
           'o' || lpad(g::text, 5, '0'), '2026-07-28', 'working',
           '{"toolName":"echo","arguments":{}}'::jsonb, 'echo', 60000, 'creation', now(), now(), 2,
           ${held ? "'gone', now() + interval '1 hour', 1, 1" : "NULL, NULL, 0, 0"}
         FROM generate_series(1, ${owners}) AS g, generate_series(1, ${perOwner}) AS r`,
      );
    }
    await store.query(`ANALYZE "${schema}".mcp_tasks`);
    const capped = [];
    for (let i = 0; i < 60; i++) {
      const t0 = performance.now();
      const claimed = await store.claim("bench", { ...LIMITED, limit: 4 });
      if (claimed.length > 0) throw new Error("a claim took a task of an owner at its cap");
      if (i >= 10) capped.push(performance.now() - t0);
    }
    capped.sort((a, b) => a - b);
    console.log(
      `empty claims, ${owners} owners at their cap of ${LIMITED.maxRunningPerOwner} with 2 queued each: p50 ${percentile(capped, 0.5).toFixed(3)} / p90 ${percentile(capped, 0.9).toFixed(3)} ms`,
    );
  }
} finally {
  await store.close();
  await dropTaskSchema(URL, schema);
}
