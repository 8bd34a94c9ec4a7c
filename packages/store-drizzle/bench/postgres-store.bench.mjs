// PostgreSQL store benchmark. For each operation, at 1 and 16 operations in flight, it
// measures in the same run (1) the physical limit: the same single-row statement issued raw
// through the same postgres.js pool, and (2) the store doing it, and prints ops/s and the
// ratio store/raw. Runs against dist/ (the bench script builds first via turbo).
// Bounded: BENCH_ROUNDS (3) alternations of BENCH_SECONDS (1 s) per side and case.
// BENCH_ONLY=create,complete runs only the cases whose name starts with one of those words.
//
// The raw statements are what a minimal correct store must send for the operation, no more:
// create is a plain INSERT returning the database-clock creation time (the caller needs it
// back); get and complete are scoped to the owner (the contract requires it), and complete
// is a conditional UPDATE returning the row (the caller gets the updated record back).
//
// Then the queue: claims per second from a pre-filled queue (one task per claim, and batches
// of 10) next to the store's own create rate, measured alternately in the same process, as
// the ratio claim/create: a queue whose workers claim slower than its producers create
// falls behind. BENCH_ONLY=claim runs only that part.
import { createIdGenerator, owner as makeOwner } from "@mcp-tasks/core";
import { ownerKey, ownerScope } from "@mcp-tasks/core/store";
import postgres from "postgres";
import { createPostgresTaskStore, migrate } from "../dist/index.js";

const URL = process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";
const SECONDS = Number(process.env.BENCH_SECONDS ?? 1);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const WARMUP_MS = 200;
const OWNERS = 100;
const SEED_LISTED = 20_000; // finished tasks spread over the owners, for get and list
const SEED_WORKING = 160_000; // running tasks for the raw and store completes to finish
const SEED_QUEUED = 150_000; // queued tasks for the claims
const PAGE = 50;
const ONLY = (process.env.BENCH_ONLY ?? "").split(",").filter((w) => w.length > 0);
const wanted = (name) => ONLY.length === 0 || ONLY.some((w) => name.startsWith(w));
const schema = `bench_${process.pid}`;
const T = `"${schema}"."mcp_tasks"`;

const owners = Array.from({ length: OWNERS }, (_, i) => makeOwner({ principalId: `owner-${i}` }));
const closedScopes = owners.map((o) => ownerScope(o, { requireOwner: true }));
const openScopes = owners.map((o) => ownerScope(o, { requireOwner: false }));
const keys = owners.map(ownerKey);
const REQUEST = { toolName: "echo", arguments: { text: "hello" } };
const RESULT = { content: [{ type: "text", text: "done" }] };
const ids = createIdGenerator();
const pick = (n) => Math.floor(Math.random() * n);

const sql = postgres(URL, {
  max: 16,
  prepare: true,
  onnotice: () => {},
  connection: { application_name: "mcp-tasks-bench" },
});

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

async function main() {
  await migrate(sql, { schema });
  console.log(
    `seeding ${SEED_LISTED + SEED_WORKING + (wanted("claim") ? SEED_QUEUED : 0)} tasks in schema ${schema} …`,
  );
  const ownerParts = JSON.stringify(owners.map((o) => o.principalId));
  const ownerKeys = JSON.stringify(keys);
  const seed = (n, status, prefix, holder) =>
    sql.unsafe(
      `INSERT INTO ${T} (id, owner_key, owner_principal, era, status, request, tool_name, result, ttl_ms, ttl_anchor, created_at, updated_at,
         lease_holder, lease_expires_at, attempt, fencing_token)
       SELECT $1 || g, ($2::text::jsonb ->> (g % ${OWNERS})::int), ($3::text::jsonb ->> (g % ${OWNERS})::int), '2026-07-28', $4,
         $5::text::jsonb, $6::text, NULL, 3600000, 'creation', now(), now(),
         $8::text, CASE WHEN $8::text IS NULL THEN NULL ELSE now() + interval '1 day' END,
         CASE WHEN $8::text IS NULL THEN 0 ELSE 1 END, CASE WHEN $8::text IS NULL THEN 0 ELSE 1 END
       FROM generate_series(1, $7::int) AS g`,
      [prefix, ownerKeys, ownerParts, status, JSON.stringify(REQUEST), REQUEST.toolName, n, holder],
    );
  // Running tasks held by a (seeded) worker, and a queue of tasks nobody holds yet.
  await seed(SEED_LISTED, "working", "l-", "seed-worker");
  await seed(SEED_WORKING, "working", "w-", "seed-worker");
  if (wanted("claim")) await seed(SEED_QUEUED, "working", "q-", null);
  await sql.unsafe(`VACUUM ANALYZE ${T}`);
  const working = Array.from({ length: SEED_WORKING }, (_, i) => `w-${i + 1}`);
  let nextWorking = 0;
  const takeWorking = () => {
    if (nextWorking >= working.length) throw new Error("bench ran out of seeded running tasks");
    return working[nextWorking++];
  };
  const listedId = () => `l-${1 + pick(SEED_LISTED)}`;
  // Owner of l-g is g % OWNERS.
  const ownerOfListed = (id) => Number(id.slice(2)) % OWNERS;

  const store = await createPostgresTaskStore({
    sql,
    schema,
    maxPageSize: 100,
    ...(process.env.BENCH_NOTIFY_INTERVAL_MS === undefined
      ? {}
      : { notifyIntervalMs: Number(process.env.BENCH_NOTIFY_INTERVAL_MS) }),
  });
  const requestJson = JSON.stringify(REQUEST);
  const resultJson = JSON.stringify(RESULT);

  const cases = [
    {
      name: "create",
      raw: () => {
        const o = pick(OWNERS);
        return sql`INSERT INTO ${sql(schema)}.mcp_tasks (id, owner_key, owner_principal, era, status, request, tool_name, ttl_ms, ttl_anchor, created_at, updated_at)
          VALUES (${ids()}, ${keys[o]}, ${owners[o].principalId}, '2026-07-28', 'working', ${requestJson}::text::jsonb, ${REQUEST.toolName}, 3600000, 'creation', now(), now())
          RETURNING created_at`;
      },
      store: () =>
        store.create(
          {
            taskId: ids(),
            era: "2026-07-28",
            request: REQUEST,
            ttlMs: 3_600_000,
            ttlAnchor: "creation",
            pollIntervalMs: null,
          },
          closedScopes[pick(OWNERS)],
        ),
    },
    {
      name: "get",
      raw: () => {
        const id = listedId();
        return sql`SELECT * FROM ${sql(schema)}.mcp_tasks WHERE id = ${id} AND owner_key = ${keys[ownerOfListed(id)]}`;
      },
      store: () => {
        const id = listedId();
        return store.get(id, closedScopes[ownerOfListed(id)]);
      },
    },
    {
      name: "complete",
      raw: () => {
        const id = takeWorking();
        return sql`UPDATE ${sql(schema)}.mcp_tasks SET status = 'completed', result = ${resultJson}::text::jsonb, updated_at = now()
          WHERE id = ${id} AND owner_key = ${keys[Number(id.slice(2)) % OWNERS]} AND status IN ('working', 'input_required')
          RETURNING *`;
      },
      store: () => {
        const id = takeWorking();
        return store.complete(id, closedScopes[Number(id.slice(2)) % OWNERS], RESULT);
      },
    },
    {
      name: "owner page (50)",
      raw: () =>
        sql`SELECT * FROM ${sql(schema)}.mcp_tasks WHERE owner_key = ${keys[pick(OWNERS)]} AND seq > 0 ORDER BY seq LIMIT ${PAGE}`,
      store: () => store.list(closedScopes[pick(OWNERS)], { limit: PAGE }),
    },
    {
      name: "owner page (50), + unowned",
      raw: () =>
        sql`SELECT * FROM ${sql(schema)}.mcp_tasks WHERE owner_key = ${keys[pick(OWNERS)]} AND seq > 0 ORDER BY seq LIMIT ${PAGE}`,
      store: () => store.list(openScopes[pick(OWNERS)], { limit: PAGE }),
    },
  ];

  const rows = [];
  for (const c of cases) {
    if (!wanted(c.name)) continue;
    for (const inFlight of [1, 16]) {
      // Alternate raw and store in short rounds, so load drifting on the machine during the
      // run hits both sides alike.
      let raw = 0;
      let ours = 0;
      for (let round = 0; round < ROUNDS; round++) {
        raw += (await measure(inFlight, c.raw)) / ROUNDS;
        ours += (await measure(inFlight, c.store)) / ROUNDS;
      }
      rows.push({ name: c.name, inFlight, raw, ours, ratio: ours / raw });
      console.log(
        `${c.name.padEnd(28)} ${String(inFlight).padStart(2)} in flight: raw ${Math.round(raw).toLocaleString("en-US").padStart(7)} ops/s, store ${Math.round(ours).toLocaleString("en-US").padStart(7)} ops/s, ratio ${(ours / raw).toFixed(2)}`,
      );
    }
  }
  console.log("\n| Operation | In flight | Raw statement (ops/s) | Store (ops/s) | Store / raw |");
  console.log("|---|---:|---:|---:|---:|");
  for (const r of rows) {
    console.log(
      `| ${r.name} | ${r.inFlight} | ${Math.round(r.raw).toLocaleString("en-US")} | ${Math.round(r.ours).toLocaleString("en-US")} | ${r.ratio.toFixed(2)} |`,
    );
  }
  if (wanted("claim")) await claimBench(store);
  await store.close();
}

/**
 * Claims from the pre-filled queue against the store's create rate (queued creates, the
 * producer side), alternated in short rounds like the cases above. A claim of `batch` tasks
 * counts as `batch` claimed tasks.
 */
async function claimBench(store) {
  const lease = { leaseMs: 60_000 };
  const create = () =>
    store.create(
      {
        taskId: ids(),
        era: "2026-07-28",
        request: REQUEST,
        ttlMs: 3_600_000,
        ttlAnchor: "creation",
        pollIntervalMs: null,
      },
      closedScopes[pick(OWNERS)],
    );
  let claimedTotal = 0;
  const claim = (batch) => async () => {
    const got = await store.claim(`bench-${pick(16)}`, { limit: batch, ...lease });
    if (got.length < batch) throw new Error("bench ran out of queued tasks");
    claimedTotal += got.length;
  };
  const rows = [];
  for (const [batch, inFlight] of [
    [1, 1],
    [1, 16],
    [10, 16],
  ]) {
    let creates = 0;
    let claims = 0;
    for (let round = 0; round < ROUNDS; round++) {
      creates += (await measure(inFlight, create)) / ROUNDS;
      claims += ((await measure(inFlight, claim(batch))) * batch) / ROUNDS;
    }
    rows.push({ batch, inFlight, creates, claims, ratio: claims / creates });
    console.log(
      `claim (${batch} per call)`.padEnd(28) +
        ` ${String(inFlight).padStart(2)} in flight: create ${Math.round(creates).toLocaleString("en-US").padStart(7)} tasks/s, claim ${Math.round(claims).toLocaleString("en-US").padStart(7)} tasks/s, ratio ${(claims / creates).toFixed(2)}`,
    );
  }
  console.log(
    "\n| Claim | In flight | Store create (tasks/s) | Store claim (tasks/s) | Claim / create |",
  );
  console.log("|---|---:|---:|---:|---:|");
  for (const r of rows) {
    console.log(
      `| ${r.batch} per call | ${r.inFlight} | ${Math.round(r.creates).toLocaleString("en-US")} | ${Math.round(r.claims).toLocaleString("en-US")} | ${r.ratio.toFixed(2)} |`,
    );
  }
  console.log(`(${claimedTotal.toLocaleString("en-US")} tasks claimed in all)`);
}

try {
  await main();
} finally {
  await sql.unsafe(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => {});
  await sql.end({ timeout: 5 });
}
