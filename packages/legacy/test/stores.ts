import type { StoreFactory } from "./fixtures.js";

/**
 * Store factories beyond the memory store. The PostgreSQL store (`@mcp-tasks/store-drizzle`,
 * on embedded PGlite) is added when it is built in this workspace.
 */
export async function extraStoreFactories(): Promise<StoreFactory[]> {
  return [];
}
