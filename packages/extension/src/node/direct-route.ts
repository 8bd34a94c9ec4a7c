import type { IncomingHttpHeaders } from "node:http";
import type { InboundClassificationOutcome } from "@modelcontextprotocol/server";
import {
  CLIENT_CAPABILITIES_META_KEY,
  MODERN_PROTOCOL_VERSION,
  PROTOCOL_VERSION_META_KEY,
} from "../constants.js";
import { isPlainObject, single } from "./guards.js";

/** The methods answered straight from the extension's handlers. */
export type DirectTasksMethod = "tasks/get" | "tasks/update" | "tasks/cancel";

const DIRECT_METHODS: ReadonlySet<string> = new Set(["tasks/get", "tasks/update", "tasks/cancel"]);
const TASK_ID_MAX = 512;

/** A plain 2026-07-28 `tasks/*` request that needs nothing from the SDK. */
export interface DirectTasksRequest {
  readonly method: DirectTasksMethod;
  readonly id: string | number;
  readonly taskId: string;
  readonly params: Record<string, unknown>;
  readonly clientCapabilities: unknown;
}

/** `inputResponses` absent, or an object of objects: the shape every layer accepts alike. */
function plainInputResponses(value: unknown): boolean {
  if (value === undefined) return true;
  if (!isPlainObject(value)) return false;
  for (const key in value) {
    if (key.length === 0 || key.length > 256 || !isPlainObject(value[key])) return false;
  }
  return true;
}

/**
 * Whether a parsed POST body is a `tasks/get`, `tasks/update` or `tasks/cancel` that the
 * SDK would hand to the extension unchanged: a single request with the 2026-07-28 envelope
 * (the SDK's own classifier accepts it as modern), `MCP-Protocol-Version` and `Mcp-Method`
 * present and agreeing, `Mcp-Name` exactly `params.taskId`, and params the handler's schema
 * accepts. Anything else (every mismatch, every malformed or unusual request) returns
 * `undefined` and goes to the SDK, which rejects it exactly as it always does. `route` is
 * the SDK's classification of this very request (`classifyInboundRequest`).
 */
export function matchDirectTasksRequest(
  headers: IncomingHttpHeaders,
  body: unknown,
  route: InboundClassificationOutcome,
): DirectTasksRequest | undefined {
  if (!isPlainObject(body) || body.jsonrpc !== "2.0") return undefined;
  const method = body.method;
  if (typeof method !== "string" || !DIRECT_METHODS.has(method)) return undefined;
  const id = body.id;
  if (typeof id !== "string" && typeof id !== "number") return undefined;
  const params = body.params;
  if (!isPlainObject(params)) return undefined;
  const taskId = params.taskId;
  if (typeof taskId !== "string" || taskId.length === 0 || taskId.length > TASK_ID_MAX) {
    return undefined;
  }
  if (method === "tasks/update" && !plainInputResponses(params.inputResponses)) return undefined;
  const meta = params._meta;
  if (!isPlainObject(meta) || meta[PROTOCOL_VERSION_META_KEY] !== MODERN_PROTOCOL_VERSION) {
    return undefined;
  }
  const protocolVersionHeader = single(headers["mcp-protocol-version"]);
  const mcpMethodHeader = single(headers["mcp-method"]);
  const mcpNameHeader = single(headers["mcp-name"]);
  if (protocolVersionHeader !== MODERN_PROTOCOL_VERSION) return undefined;
  if (mcpMethodHeader !== method || mcpNameHeader !== taskId) return undefined;
  if (route.kind !== "modern" || route.messageKind !== "request") return undefined;
  if (route.classification.revision !== MODERN_PROTOCOL_VERSION) return undefined;
  return {
    method: method as DirectTasksMethod,
    id,
    taskId,
    params,
    clientCapabilities: meta[CLIENT_CAPABILITIES_META_KEY],
  };
}
