/**
 * `@mcp-tasks/extension/client`: what a client of a 2026-07-28 tasks server needs next to
 * `@modelcontextprotocol/ext-tasks` — the HTTP `rawDispatch` ({@link createRawDispatch}) its
 * 2026-07-28 path asks the host for. Web-standard `fetch` only: no server code, no
 * dependencies.
 *
 * @packageDocumentation
 */
export {
  createRawDispatch,
  type PerRequest,
  RawDispatchHttpError,
  type RawDispatchOptions,
} from "./raw-dispatch.js";
export { encodeRoutingHeader } from "./routing-header.js";
export type {
  JsonRpcErrorObject,
  JsonValue,
  RawDispatch,
  RawDispatchRequestOptions,
  RawDispatchResponse,
} from "./types.js";
