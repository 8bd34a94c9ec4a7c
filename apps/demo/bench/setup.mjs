// What the HTTP benchmarks set up the same way: a PostgreSQL store on a fresh schema (and
// its removal), and the demo app serving anonymous callers on 127.0.0.1.
import { createPostgresTaskStore, migrate } from "@mcp-tasks/store-drizzle";
import postgres from "postgres";
import { anonymousResolver, createDemoApp, demoTools, listen } from "../dist/index.js";

/** A store on the fresh, migrated `schema` of `url`; `drop` removes the schema. */
export async function freshPostgresStore(url, schema, storeOptions = {}) {
  await migrate(url, { schema });
  const store = await createPostgresTaskStore({ url, schema, ...storeOptions });
  return { store, drop: () => dropSchema(url, schema) };
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
 */
export function listenDemo(store, options = {}) {
  const app = createDemoApp({
    store,
    resolver: anonymousResolver,
    requireAuth: false,
    tools: demoTools(),
    onError: () => {},
    ...options,
  });
  return listen(app, { host: "127.0.0.1", port: 0 });
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
