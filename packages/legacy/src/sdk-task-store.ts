/**
 * `@mcp-tasks/legacy/sdk-task-store`: a drop-in `TaskStore` and `TaskMessageQueue` for
 * `@modelcontextprotocol/sdk` 1.x servers that use its experimental tasks, backed by any
 * `@mcp-tasks/core` store: durable, owner-scoped tasks by changing the server's options and
 * no handler.
 *
 * `@modelcontextprotocol/sdk` is an optional peer dependency used by this entry point only
 * (types only: nothing here imports it at runtime).
 *
 * @packageDocumentation
 */

import type { SdkTaskStoreOptions } from "./sdk-task-store/options.js";
import { SdkTaskMessageQueue, type SdkTaskMessageQueueOptions } from "./sdk-task-store/queue.js";
import { SdkTaskStore } from "./sdk-task-store/store.js";

export {
  defaultSdkOwner,
  type SdkOwnerContext,
  withTaskAuth,
} from "./sdk-task-store/context.js";
export type { SdkLeaseOptions } from "./sdk-task-store/leases.js";
export {
  SdkTaskMessageQueue,
  type SdkTaskMessageQueueOptions,
  SdkTaskStore,
  type SdkTaskStoreOptions,
};

/**
 * The options to spread into `new McpServer(info, { ... })` / `new Server(info, { ... })`:
 * `taskStore` and `taskMessageQueue` over `service`.
 */
export function sdkTaskOptions(
  options: SdkTaskStoreOptions & { readonly queue?: SdkTaskMessageQueueOptions },
): { taskStore: SdkTaskStore; taskMessageQueue: SdkTaskMessageQueue } {
  return {
    taskStore: new SdkTaskStore(options),
    taskMessageQueue: new SdkTaskMessageQueue(options.queue),
  };
}
