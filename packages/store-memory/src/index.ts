/**
 * `@mcp-tasks/store-memory`: a bounded, indexed, in-process task store.
 *
 * @packageDocumentation
 */
export { MemoryTaskStore } from "./memory-store.js";
export type { MemoryTaskStoreOptions } from "./options.js";
