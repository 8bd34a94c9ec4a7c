import type { TaskStore } from "@mcp-tasks/core";
import { MemoryTaskStore } from "@mcp-tasks/store-memory";

/** The store backends the demo knows. */
export type StoreKind = "memory" | "pglite" | "postgres";

/** Thrown for a store that cannot be used; the message says why. */
export class StoreUnavailableError extends Error {
  override readonly name = "StoreUnavailableError";
}

/** Opens the task store of the given kind. */
export async function openStore(kind: StoreKind): Promise<TaskStore> {
  switch (kind) {
    case "memory":
      return new MemoryTaskStore({});
    case "pglite":
    case "postgres":
      throw new StoreUnavailableError(
        `the ${kind} store is not available yet: @mcp-tasks/store-drizzle is not wired into the demo`,
      );
  }
}
