/**
 * `@mcp-tasks/http`: the HTTP edge of an mcp-tasks server. One endpoint
 * ({@link createTasksEndpoint}) serves both MCP eras over one task service — 2026-07-28
 * through `@mcp-tasks/extension`, 2025-11-25 sessions through `@mcp-tasks/legacy` — with the
 * Host/Origin checks, body limit and timeouts, content-type check, owner resolution and one
 * refusal table. Mount it on `node:http` ({@link TasksEndpoint.listener},
 * {@link createTasksHttpServer}), as a web `fetch` handler ({@link TasksEndpoint.fetch}),
 * or with the adapters `@mcp-tasks/http/express` and `@mcp-tasks/http/hono`.
 *
 * @packageDocumentation
 */
export { createTasksEndpoint, type TasksEndpoint } from "./endpoint.js";
export type { FetchRequestExtra } from "./fetch-front.js";
export type { AllowList } from "./guards.js";
export { DEFAULT_OWNER_LIMITS, type OwnerLimitsOptions } from "./limits.js";
export { type NodeRequestExtra, writeRefusal } from "./node-front.js";
export { createTasksHttpServer, type TasksHttpServerOptions } from "./node-server.js";
export type {
  Era,
  LegacyEraOptions,
  LegacySessionEvent,
  RoutedRequest,
  TasksEndpointOptions,
  TasksServerFactory,
} from "./options.js";
export {
  type OwnerResolution,
  ownerFromAuthInfo,
  type RequestHead,
  type ResolveOwner,
} from "./owner.js";
export {
  inBand,
  isLimitKind,
  LIMIT_REASONS,
  type LimitKind,
  type Refusal,
  type RefusalDetail,
  type RefusalKind,
  refusal,
  refusalResponse,
} from "./refusals.js";
