// Create throughput against the number of live tasks in the table, with every quota on (as the
// demo sets them): the store's create rate at 1 and 16 creates in flight on an empty table,
// then again after 100 000 live tasks (BENCH_SCALE_LIVE) are pre-filled in bulk (one
// INSERT … SELECT generate_series), next to a raw single-row INSERT through the same pool.
// A quota that counts rows per create gets slower as the table grows; one kept in counters
// does not. Then the expiry of the pre-filled tasks by one cleanupExpired pass. Runs against
// dist/ (build first). Bounded: BENCH_ROUNDS (3) alternations of
// BENCH_SECONDS (1 s) per side and case.
//
//   DATABASE_URL=postgres://postgres@127.0.0.1:5432/test node bench/create-scale.bench.mjs
import { createIdGenerator, owner as makeOwner } from "@mcp-tasks/core";
import { ownerKey, ownerScope } from "@mcp-tasks/core/store";
import postgres from "postgres";
import { createPostgresTaskStore, migrate } from "../dist/index.js";

const URL = process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";
const SECONDS = Number(process.env.BENCH_SECONDS ?? 1);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const LIVE = Number(process.env.BENCH_SCALE_LIVE ?? 100_000);
const WARMUP_MS = 200;
// Few owners, so that each holds many live tasks (the demo's anonymous callers are one).
const OWNERS = 4;
const schema = `bench_scale_${process.pid}`;
const T = `"${schema}"."mcp_tasks"`;

const owners = Array.from({ length: OWNERS }, (_, i) => makeOwner({ principalId: `owner-${i}` }));
const scopes = owners.map((o) => ownerScope(o, { requireOwner: true }));
const keys = owners.map(ownerKey);
const REQUEST = { toolName: "echo", arguments: { text: "hello" } };
const ids = createIdGenerator();
const pick = (n) => Math.floor(Math.random() * n);

const sql = postgres(URL, { max: 16, prepare: true, onnotice: () => {} });

async function measure(inFlight, op) {
  let count = 0;
  let measuring = false;
  const start = performance.now();
  const warmEnd = start + WARMUP_MS;
  const end = warmEnd + SECONDS * 1000;
  let t0 = 0;
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      for (;;) {
        const now = performance.now();
        if (now >= end) return;
        if (!measuring && now >= warmEnd) {
          measuring = true;
          t0 = now;
        }
        await op();
        if (measuring) count++;
      }
    }),
  );
  return count / ((performance.now() - t0) / 1000);
}

/** Pre-fills `n` live (running, held) tasks over the owners, one statement per table. */
async function prefill(n) {
  for (const table of [T, `"${schema}".raw_tasks`])
    await sql.unsafe(
      `INSERT INTO ${table} (id, owner_key, owner_principal, era, status, request, tool_name, ttl_ms, ttl_anchor,
       created_at, updated_at, lease_holder, lease_expires_at, attempt, fencing_token, payload_bytes)
     SELECT 'prefill:' || g, ($1::text::jsonb ->> (g % ${OWNERS})::int), ($2::text::jsonb ->> (g % ${OWNERS})::int),
       '2026-07-28', 'working', $3::text::jsonb, $4::text, 3600000, 'creation', now(), now(),
       'seed-worker', now() + interval '1 day', 1, 1, 16
     FROM generate_series(1, $5::int) AS g`,
      [
        JSON.stringify(keys),
        JSON.stringify(owners.map((o) => o.principalId)),
        JSON.stringify(REQUEST),
        REQUEST.toolName,
        n,
      ],
    );
  await recount();
  await sql.unsafe(`VACUUM ANALYZE ${T}`);
  await sql.unsafe(`VACUUM ANALYZE "${schema}".raw_tasks`);
}

/**
 * Removes the tasks the previous measurement created (keeping the pre-filled ones), so that
 * each measurement starts at the same number of live tasks.
 */
async function reset() {
  await sql.unsafe(`DELETE FROM ${T} WHERE id NOT LIKE 'prefill:%'`);
  await recount();
  // The deleted rows' dead index entries would slow the next inserts down (not the raw side's).
  await sql.unsafe(`VACUUM ANALYZE ${T}`);
  const [{ usage }] = await sql.unsafe(
    `SELECT to_regclass('"${schema}"."mcp_task_usage"') IS NOT NULL AS usage`,
  );
  if (usage) await sql.unsafe(`VACUUM ANALYZE "${schema}"."mcp_task_usage"`);
}

/**
 * A store that keeps usage counters: brings them in line with the table, as the migration's
 * backfill does (the pre-filled rows bypassed the store).
 */
async function recount() {
  const [{ usage }] = await sql.unsafe(
    `SELECT to_regclass('"${schema}"."mcp_task_usage"') IS NOT NULL AS usage`,
  );
  if (usage) {
    await sql.unsafe(`DELETE FROM "${schema}"."mcp_task_usage"`);
    await sql.unsafe(
      `INSERT INTO "${schema}"."mcp_task_usage" (owner_key, stripe, tasks, bytes)
       SELECT k, s, sum(c), sum(b) FROM (
         SELECT owner_key AS k, hashtext(id) & 15 AS s, count(*) AS c, sum(payload_bytes) AS b
           FROM ${T} GROUP BY 1, 2
         UNION ALL
         SELECT '*', hashtext(id) & 15, count(*), 0 FROM ${T} GROUP BY 2) AS u
       GROUP BY k, s`,
    );
  }
}

async function main() {
  await migrate(sql, { schema });
  // The raw inserts go to a copy of the table, so they do not fill the store's.
  await sql.unsafe(`CREATE TABLE "${schema}".raw_tasks (LIKE ${T} INCLUDING ALL)`);
  const store = await createPostgresTaskStore({
    sql,
    schema,
    maxTasks: 10_000_000,
    maxTasksPerOwner: 10_000_000,
    maxBytesPerOwner: 64 * 1024 * 1024,
  });
  const requestJson = JSON.stringify(REQUEST);
  const storeCreate = () =>
    store.create(
      {
        taskId: ids(),
        era: "2026-07-28",
        request: REQUEST,
        ttlMs: 3_600_000,
        ttlAnchor: "creation",
        pollIntervalMs: null,
      },
      scopes[pick(OWNERS)],
    );
  const rawCreate = () => {
    const o = pick(OWNERS);
    return sql`INSERT INTO ${sql(schema)}.raw_tasks (id, owner_key, owner_principal, era, status, request, tool_name, ttl_ms, ttl_anchor, created_at, updated_at)
      VALUES (${ids()}, ${keys[o]}, ${owners[o].principalId}, '2026-07-28', 'working', ${requestJson}::text::jsonb, ${REQUEST.toolName}, 3600000, 'creation', now(), now())
      RETURNING created_at`;
  };
  const rows = [];
  for (const live of [0, LIVE]) {
    if (live > 0) {
      console.log(`pre-filling ${live.toLocaleString("en-US")} live tasks …`);
      await prefill(live);
    }
    for (const inFlight of [1, 16]) {
      let raw = 0;
      let ours = 0;
      for (let round = 0; round < ROUNDS; round++) {
        raw += (await measure(inFlight, rawCreate)) / ROUNDS;
        await reset();
        ours += (await measure(inFlight, storeCreate)) / ROUNDS;
      }
      rows.push({ live, inFlight, raw, ours });
      console.log(
        `live ${String(live).padStart(7)}, ${String(inFlight).padStart(2)} in flight: raw insert ${Math.round(raw)}/s, store create ${Math.round(ours)}/s`,
      );
    }
  }
  console.log(
    "\n| Live tasks | In flight | Raw INSERT (ops/s) | Store create, quotas on (ops/s) | Store / raw | vs empty table |",
  );
  console.log("|---:|---:|---:|---:|---:|---:|");
  for (const r of rows) {
    const empty = rows.find((e) => e.live === 0 && e.inFlight === r.inFlight);
    console.log(
      `| ${r.live.toLocaleString("en-US")} | ${r.inFlight} | ${Math.round(r.raw).toLocaleString("en-US")} | ${Math.round(r.ours).toLocaleString("en-US")} | ${(r.ours / r.raw).toFixed(2)} | ${(r.ours / empty.ours).toFixed(2)} |`,
    );
  }
  // Expiry: every pre-filled task ends in the past, then one cleanupExpired pass removes
  // them in bounded batches (one statement per batch, usage counters included).
  await sql.unsafe(
    `UPDATE ${T} SET status = 'completed', lease_holder = NULL, lease_expires_at = NULL,
       expires_at = now() - interval '1 second' WHERE id LIKE 'prefill:%'`,
  );
  await sql.unsafe(`VACUUM ANALYZE ${T}`);
  const t0 = performance.now();
  const removed = await store.cleanupExpired();
  const seconds = (performance.now() - t0) / 1000;
  console.log(
    `\nexpiry: cleanupExpired removed ${removed.toLocaleString("en-US")} expired tasks in ${seconds.toFixed(2)} s (${Math.round(removed / seconds).toLocaleString("en-US")} tasks/s)`,
  );
  await store.close();
}

try {
  await main();
} finally {
  await sql.unsafe(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => {});
  await sql.end({ timeout: 5 });
}
