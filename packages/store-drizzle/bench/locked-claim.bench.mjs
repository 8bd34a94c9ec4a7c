// The round trip of a claim under an owner limit, which runs after the claim lock (see
// `src/plans/locked.ts`): empty claims one after another on a store with one connection,
// warmed first with the store's usual statements (so the connection has them prepared, as
// in service). Reports p10 / p50 / p90 over LOCKED_CLAIMS claims (400). Everything the
// claim lock holds up waits this long per claim, on every node.
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
} finally {
  await store.close();
  await dropTaskSchema(URL, schema);
}
