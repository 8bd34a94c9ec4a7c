/**
 * `@mcp-tasks/store-memory`: a bounded, indexed, in-process task store.
 *
 * @packageDocumentation
 */
export { MemoryTaskStore, type MemoryTaskStoreOptions } from "./memory-store.js";
