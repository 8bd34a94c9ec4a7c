import { parseArgs } from "node:util";
import type { StoreKind } from "./store.js";

/** The demo's settings after flags and environment. */
export interface DemoConfig {
  readonly host: string;
  readonly port: number;
  readonly store: StoreKind;
  /** pglite: where the database lives (`<dataDir>/pglite`). */
  readonly dataDir: string;
  /** postgres: the connection URL. */
  readonly databaseUrl: string;
  /** pglite/postgres: the schema of the task table. */
  readonly schema: string | undefined;
  /** How long a node's lease on a running task lasts (pglite/postgres). */
  readonly leaseMs: number;
  /** How often expired tasks are deleted and orphaned tasks failed (pglite/postgres). */
  readonly sweepMs: number;
  /** `token=principal@tenant,...`, or `undefined` to generate two dev tokens. */
  readonly tokens: string | undefined;
  readonly requireAuth: boolean;
  readonly legacy: boolean;
  readonly help: boolean;
}

export const HELP = `Usage: mcp-tasks-demo [options]

Serves MCP tasks at http://HOST:PORT/mcp for 2026-07-28 clients (tasks extension) and
2025-11-25 clients (sessions) at once, and request counters at http://HOST:PORT/metrics.

Options (flag / environment variable):
  --port N            PORT             port to listen on; 0 picks a free port (default 3000)
  --host H            HOST             address to bind (default 127.0.0.1)
  --store KIND        MCP_TASKS_STORE  memory | pglite | postgres (default memory)
  --data-dir DIR      PGLITE_DIR       pglite: data directory (default ./.mcp-tasks)
  --database-url URL  DATABASE_URL     postgres: connection URL
                                       (default postgres://postgres@127.0.0.1:5432/test)
  --schema NAME       MCP_TASKS_SCHEMA pglite/postgres: schema of the task table (default public)
  --lease-ms N        MCP_TASKS_LEASE_MS  pglite/postgres: lease on running tasks; a task whose
                                       node stops renewing it is failed as orphaned (default 30000)
  --sweep-ms N        MCP_TASKS_SWEEP_MS  pglite/postgres: expiry and orphan sweep interval
                                       (default the lease, at most 10000)
  --tokens LIST       DEMO_TOKENS      bearer tokens: alice-token=alice@acme,bob-token=bob@acme
                                       (default: two random dev tokens, printed at start)
  --require-auth      DEMO_REQUIRE_AUTH=1  answer anonymous requests 401
  --legacy on|off     DEMO_LEGACY      serve the 2025-11-25 era (default on)
  -h, --help                           show this help
`;

/** Thrown for bad flags; the message is for the user. */
export class ConfigError extends Error {
  override readonly name = "ConfigError";
}

function truthy(value: string | undefined): boolean {
  return value !== undefined && /^(1|true|yes|on)$/i.test(value);
}

function positiveInt(name: string, text: string, min: number, max: number): number {
  const value = Number(text);
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(value) || value < min || value > max) {
    throw new ConfigError(`${name} must be an integer from ${min} to ${max}, got '${text}'`);
  }
  return value;
}

/** Parses flags (winning) and environment variables. */
export function parseConfig(argv: readonly string[], env: NodeJS.ProcessEnv): DemoConfig {
  let values: ReturnType<typeof parse>["values"];
  function parse() {
    return parseArgs({
      args: [...argv],
      strict: true,
      allowPositionals: false,
      options: {
        port: { type: "string" },
        host: { type: "string" },
        store: { type: "string" },
        "data-dir": { type: "string" },
        "database-url": { type: "string" },
        schema: { type: "string" },
        "lease-ms": { type: "string" },
        "sweep-ms": { type: "string" },
        tokens: { type: "string" },
        "require-auth": { type: "boolean" },
        legacy: { type: "string" },
        help: { type: "boolean", short: "h" },
      },
    });
  }
  try {
    values = parse().values;
  } catch (error) {
    throw new ConfigError((error as Error).message);
  }
  const port = positiveInt("--port", values.port ?? (env.PORT || "3000"), 0, 65535);
  const store = values.store ?? (env.MCP_TASKS_STORE || "memory");
  if (store !== "memory" && store !== "pglite" && store !== "postgres") {
    throw new ConfigError(`--store must be memory, pglite or postgres, got '${store}'`);
  }
  const legacy = values.legacy ?? (env.DEMO_LEGACY || "on");
  if (legacy !== "on" && legacy !== "off") {
    throw new ConfigError(`--legacy must be on or off, got '${legacy}'`);
  }
  const schema = values.schema ?? (env.MCP_TASKS_SCHEMA || undefined);
  if (schema !== undefined && !/^[a-z_][a-z0-9_]{0,40}$/.test(schema)) {
    throw new ConfigError(
      `--schema must be a lower-case SQL identifier of at most 41 characters, got '${schema}'`,
    );
  }
  const leaseMs = positiveInt(
    "--lease-ms",
    values["lease-ms"] ?? (env.MCP_TASKS_LEASE_MS || "30000"),
    100,
    86_400_000,
  );
  const sweepText = values["sweep-ms"] ?? (env.MCP_TASKS_SWEEP_MS || undefined);
  const sweepMs =
    sweepText === undefined
      ? Math.min(leaseMs, 10_000)
      : positiveInt("--sweep-ms", sweepText, 50, 86_400_000);
  const host = values.host ?? (env.HOST || "127.0.0.1");
  return {
    host,
    port,
    store,
    dataDir: values["data-dir"] ?? (env.PGLITE_DIR || ".mcp-tasks"),
    databaseUrl:
      values["database-url"] ?? (env.DATABASE_URL || "postgres://postgres@127.0.0.1:5432/test"),
    schema,
    leaseMs,
    sweepMs,
    tokens: values.tokens ?? (env.DEMO_TOKENS || undefined),
    requireAuth: values["require-auth"] ?? truthy(env.DEMO_REQUIRE_AUTH),
    legacy: legacy === "on",
    help: values.help ?? false,
  };
}
