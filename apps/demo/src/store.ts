import { resolve } from "node:path";
import type { TaskStore } from "@mcp-tasks/core";
import { supportsQueue } from "@mcp-tasks/core/store";
import { createPGliteTaskStore, createPostgresTaskStore, migrate } from "@mcp-tasks/store-drizzle";
import { MemoryTaskStore } from "@mcp-tasks/store-memory";

/** The store backends the demo knows. */
export type StoreKind = "memory" | "pglite" | "postgres";

/**
 * The quotas every demo store enforces, answered `store_full` (naming the quota). Finished
 * tasks count until their ttl ends, so they are sized for a task kept an hour: one owner
 * creating a task every second holds 3 600.
 */
export interface StoreLimits {
  /** Most tasks held at once, all owners together. */
  readonly maxTasks: number;
  /** Most tasks one owner holds at once (anonymous callers are one owner). */
  readonly maxTasksPerOwner: number;
  /** Most payload bytes (arguments, results, input answers) one owner's tasks hold. */
  readonly maxBytesPerOwner: number;
}

/**
 * The demo's defaults: 100 000 tasks, 10 000 per owner, 64 MiB per owner. With requests of
 * at most 1 MiB, an owner holds at most 64 MiB of payload however it spreads it.
 */
export const DEFAULT_STORE_LIMITS: StoreLimits = Object.freeze({
  maxTasks: 100_000,
  maxTasksPerOwner: 10_000,
  maxBytesPerOwner: 64 * 1024 * 1024,
});

/** Where a store lives. */
export interface StoreSettings {
  readonly kind: StoreKind;
  /** pglite: the data directory; the database is `<dataDir>/pglite`. */
  readonly dataDir?: string;
  /** postgres: the connection URL. */
  readonly databaseUrl?: string;
  /** pglite/postgres: the schema of the task table (default `public`). */
  readonly schema?: string;
  /** The quotas; default {@link DEFAULT_STORE_LIMITS}. */
  readonly limits?: StoreLimits;
}

/** An open store and how to describe it on the start-up line. */
export interface OpenedStore {
  readonly store: TaskStore;
  /** e.g. `pglite /abs/.mcp-tasks/pglite` or `postgres 127.0.0.1:5432/test schema=public`. */
  readonly label: string;
  /** The store implements leases (shared/durable stores): run the runner with a lease. */
  readonly leasing: boolean;
}

/** Thrown for a store that cannot be used; the message says why. */
export class StoreUnavailableError extends Error {
  override readonly name = "StoreUnavailableError";
}

/** The URL without credentials, for logs. */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.hostname}${parsed.port ? `:${parsed.port}` : ""}${parsed.pathname}`;
  } catch {
    return "(unparsable URL)";
  }
}

function reason(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** Opens the task store, running the migrations first for pglite and postgres. */
export async function openStore(settings: StoreSettings | StoreKind): Promise<OpenedStore> {
  const s: StoreSettings = typeof settings === "string" ? { kind: settings } : settings;
  const schemaOption = s.schema === undefined ? {} : { schema: s.schema };
  const schemaLabel = s.schema === undefined ? "" : ` schema=${s.schema}`;
  const limits = s.limits ?? DEFAULT_STORE_LIMITS;
  switch (s.kind) {
    case "memory":
      return { store: new MemoryTaskStore({ ...limits }), label: "memory", leasing: false };
    case "pglite": {
      const dir = resolve(s.dataDir ?? ".mcp-tasks", "pglite");
      try {
        const store = await createPGliteTaskStore({
          dataDir: dir,
          migrate: true,
          ...schemaOption,
          ...limits,
        });
        return { store, label: `pglite ${dir}${schemaLabel}`, leasing: supportsQueue(store) };
      } catch (error) {
        throw new StoreUnavailableError(`cannot open the pglite store in ${dir}: ${reason(error)}`);
      }
    }
    case "postgres": {
      const url = s.databaseUrl ?? "postgres://postgres@127.0.0.1:5432/test";
      try {
        await migrate(url, schemaOption);
        const store = await createPostgresTaskStore({
          url,
          applicationName: "mcp-tasks-demo",
          ...schemaOption,
          ...limits,
        });
        return {
          store,
          label: `postgres ${redactUrl(url)}${schemaLabel}`,
          leasing: supportsQueue(store),
        };
      } catch (error) {
        throw new StoreUnavailableError(
          `cannot open the postgres store at ${redactUrl(url)}: ${reason(error)}`,
        );
      }
    }
  }
}
