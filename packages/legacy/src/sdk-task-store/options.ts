import type { Owner, TaskService } from "@mcp-tasks/core";
import type { SdkOwnerContext } from "./context.js";
import type { SdkLeaseOptions } from "./leases.js";

/** Settings of {@link SdkTaskStore}. */
export interface SdkTaskStoreOptions {
  readonly service: TaskService;
  /**
   * The owner of a store call. Default: the auth info's `clientId` (plus `extra.tenantId`
   * when it is a string) when there is auth info; otherwise the SDK session, so that
   * sessions never see each other's tasks (what the SDK's `TaskStore` contract asks).
   */
  readonly ownerOf?: (context: SdkOwnerContext) => Owner;
  /**
   * Told about store failures whose detail the SDK client does not get: an unreachable
   * store is answered "temporarily unavailable, retry" (`data.reason: "store_unavailable"`)
   * and its cause comes here. Default: `console.error`.
   */
  readonly onError?: (error: unknown) => void;
  /**
   * How the tasks whose work runs in this process are held (see {@link SdkLeaseOptions}):
   * on a store that is also a task queue (memory, PostgreSQL, PGlite) each task is created
   * under a lease this store renews, so a task whose process died fails "Worker lost" once
   * the lease runs out instead of staying `working`.
   */
  readonly lease?: SdkLeaseOptions;
  /**
   * Told, once per store, about a set-up that loses owners: requests of a session carry
   * auth info (`req.auth` or an `Authorization` header, on a `node:http`-based server)
   * while the store cannot see it, because their transport was not bound with
   * {@link SdkTaskStore.bindTransport}; their tasks then belong to the session instead of
   * the authenticated client. Default: `console.warn`.
   */
  readonly onWarning?: (message: string) => void;
}

/** The warning of {@link SdkTaskStoreOptions.onWarning}. */
export const UNSEEN_AUTH_WARNING =
  "SdkTaskStore: requests carry auth info the task store cannot see (their transport is not " +
  "bound), so their tasks belong to the session (mcp-session:<id>), not to the authenticated " +
  "client, and are lost to it when the session ends, e.g. on a restart. Call " +
  "SdkTaskStore.bindTransport(transport) right after server.connect(transport).";
