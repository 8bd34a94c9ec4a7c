// What the HTTP benchmarks set up the same way: a PostgreSQL store on a fresh schema (and
// its removal), the demo app on 127.0.0.1, and who calls it (see `benchCallers`).
import { owner } from "@mcp-tasks/core";
import { ownerKey } from "@mcp-tasks/core/store";
import { createPostgresTaskStore, migrate } from "@mcp-tasks/store-drizzle";
import postgres from "postgres";
import {
  anonymousResolver,
  createDemoApp,
  demoTools,
  listen,
  StaticTokenResolver,
} from "../dist/index.js";

/** A store on the fresh, migrated `schema` of `url`; `drop` removes the schema. */
export async function freshPostgresStore(url, schema, storeOptions = {}) {
  await migrate(url, { schema });
  const store = await createPostgresTaskStore({ url, schema, ...storeOptions });
  return { store, drop: () => dropSchema(url, schema) };
}

/**
 * Rebuilds the usage counters of `schema` from its rows, as migration 0004's backfill does
 * (after a bench wrote rows behind the store's back), and refreshes the planner's view.
 */
export async function recount(store, schema) {
  const usage = `"${schema}"."mcp_task_usage"`;
  const tasks = `"${schema}"."mcp_tasks"`;
  await store.query(`DELETE FROM ${usage}`);
  await store.query(
    `INSERT INTO ${usage} (owner_key, stripe, tasks, bytes)
       SELECT owner_key, hashtext(id) & 15, count(*), sum(payload_bytes) FROM ${tasks} GROUP BY 1, 2
       UNION ALL
       SELECT '*', hashtext(id) & 15, count(*), 0 FROM ${tasks} GROUP BY 2`,
  );
  await store.query(`VACUUM ANALYZE ${tasks}`);
  await store.query(`VACUUM ANALYZE ${usage}`);
}

/**
 * Waits (at most 10 s) until no task of the owners `ownerKeys` runs in `schema` (leased,
 * `working` or `input_required`); rejects naming `who` past that.
 */
export async function ownersRunsSettled(store, schema, ownerKeys, who) {
  const deadline = performance.now() + 10_000;
  while (performance.now() < deadline) {
    const [row] = await store.query(
      `SELECT count(*)::int AS n FROM "${schema}"."mcp_tasks" WHERE owner_key IN (SELECT jsonb_array_elements_text($1::text::jsonb))
         AND lease_holder IS NOT NULL AND status IN ('working', 'input_required')`,
      [JSON.stringify(ownerKeys)],
    );
    if (row.n === 0) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`the runs of ${who} did not end within 10 s`);
}

/** Drops `schema` of `url` if it exists. */
export async function dropSchema(url, schema) {
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  try {
    await sql.unsafe(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  } finally {
    await sql.end();
  }
}

/**
 * The demo app on `store`, listening on 127.0.0.1 (a free port), for anonymous callers: the
 * benchmarks' requests carry no token (`--no-auth` of the CLI). `options` adds to the app's.
 * Resolves with the running server and the `app` (its runner's settings, for instance).
 */
export async function listenDemo(store, options = {}) {
  const app = createDemoApp({
    store,
    resolver: anonymousResolver,
    requireAuth: false,
    tools: demoTools(),
    onError: () => {},
    ...options,
  });
  return { ...(await listen(app, { host: "127.0.0.1", port: 0 })), app };
}

/**
 * The demo's `maxRunningPerOwner` from BENCH_OWNER_CAP: a number, `off` for no cap, or unset
 * for the runner's default (a quarter of its concurrency). The benchmarks' connections are
 * one (anonymous) owner, so under the default most of their tasks are created queued and
 * claimed later.
 */
export function ownerCapOption() {
  const cap = process.env.BENCH_OWNER_CAP;
  if (cap === undefined || cap === "") return {};
  return { maxRunningPerOwner: cap === "off" ? Number.POSITIVE_INFINITY : Number(cap) };
}

/** How the benchmark's header names BENCH_OWNER_CAP's setting. */
export const ownerCapLabel = () => process.env.BENCH_OWNER_CAP || "the runner's default";

/**
 * Who sends the benchmarks' task-creating 2026 `tools/call`s, from BENCH_CALLERS: by default
 * `1`, one anonymous caller (no token, as in every recorded run before this knob), whose 10
 * connections go past the default cap of 8, so that most of its tasks are created queued and
 * claimed later; `N` > 1, N callers, each a bearer token of its own owner, that the requests
 * take in turn, as on a shared server, where each caller stays within its per-owner cap.
 * `options` goes to {@link listenDemo}: the tokens' resolver (no token is still anonymous);
 * `tokens` to `luaScript`; `owners` are the callers' owners, `ownerKeys` their keys.
 */
export function benchCallers() {
  const text = process.env.BENCH_CALLERS || "1";
  const count = Number(text);
  if (!Number.isInteger(count) || count < 1 || count > 1000) {
    throw new Error(`BENCH_CALLERS must be an integer from 1 to 1000, got '${text}'`);
  }
  if (count === 1) {
    const anonymous = owner({});
    return {
      count,
      label: "one anonymous caller",
      tokens: [],
      owners: [anonymous],
      ownerKeys: [ownerKey(anonymous)],
      options: {},
    };
  }
  const tokens = Array.from({ length: count }, (_, i) => `bench-caller-${i}`);
  const owners = tokens.map((_, i) => owner({ principalId: `caller-${i}` }));
  return {
    count,
    label: `${count} callers in turn (a bearer token each, one owner each)`,
    tokens,
    owners,
    ownerKeys: owners.map(ownerKey),
    options: { resolver: new StaticTokenResolver(new Map(tokens.map((t, i) => [t, owners[i]]))) },
  };
}

/**
 * The demo's own timing of its store calls, read from its metrics registry (what its
 * `/metrics` renders): for each operation, the seconds summed and the calls counted so far
 * (`mcp_store_operation_duration_seconds`). Two readings around a run give the run's mean
 * time of a call, from the caller's side: the wait for a batch and the round trip to the
 * database included.
 */
export async function storeCallSeconds(app) {
  const metric = app.metrics.registry.getSingleMetric("mcp_store_operation_duration_seconds");
  const calls = new Map();
  for (const { metricName, labels, value } of (await metric.get()).values) {
    const entry = calls.get(labels.op) ?? { seconds: 0, count: 0 };
    if (metricName.endsWith("_sum")) entry.seconds = value;
    else if (metricName.endsWith("_count")) entry.count = value;
    calls.set(labels.op, entry);
  }
  return calls;
}

/** The mean ms of an `op` call between two {@link storeCallSeconds} readings; NaN if none. */
export function meanCallMs(before, after, op) {
  const a = before.get(op) ?? { seconds: 0, count: 0 };
  const b = after.get(op) ?? { seconds: 0, count: 0 };
  const count = b.count - a.count;
  return count > 0 ? ((b.seconds - a.seconds) * 1000) / count : Number.NaN;
}

/**
 * Runs a bench's `main`: an error is printed and the exit code set to 1; then, everything
 * closed, if the process is still held open 10 s later it names what holds it
 * (`process.getActiveResourcesInfo()`) and exits with 1, rather than hanging without a word
 * (twice an HTTP bench run printed its table and never exited: a PostgreSQL store's read
 * connection and a timer were left).
 */
export function runBench(main, heldOpenMs = 10_000) {
  main()
    .catch((error) => {
      console.error(error);
      process.exitCode = 1;
    })
    .then(() => {
      setTimeout(() => {
        const held = process.getActiveResourcesInfo().join(", ");
        console.error(
          `closed everything ${heldOpenMs / 1000} s ago, yet the process is held open by: ${held}`,
        );
        process.exit(1);
      }, heldOpenMs).unref();
    });
}
