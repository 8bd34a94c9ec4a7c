import { resolve } from "node:path";
import type { TaskStore } from "@mcp-tasks/core";
import { supportsQueue } from "@mcp-tasks/core/store";
import { createPGliteTaskStore, createPostgresTaskStore, migrate } from "@mcp-tasks/store-drizzle";
import { MemoryTaskStore } from "@mcp-tasks/store-memory";

/** The store backends the demo knows. */
export type StoreKind = "memory" | "pglite" | "postgres";

/** Where a store lives. */
export interface StoreSettings {
  readonly kind: StoreKind;
  /** pglite: the data directory; the database is `<dataDir>/pglite`. */
  readonly dataDir?: string;
  /** postgres: the connection URL. */
  readonly databaseUrl?: string;
  /** pglite/postgres: the schema of the task table (default `public`). */
  readonly schema?: string;
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
  switch (s.kind) {
    case "memory":
      return { store: new MemoryTaskStore({}), label: "memory", leasing: false };
    case "pglite": {
      const dir = resolve(s.dataDir ?? ".mcp-tasks", "pglite");
      try {
        const store = await createPGliteTaskStore({ dataDir: dir, migrate: true, ...schemaOption });
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
