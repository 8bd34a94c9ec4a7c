import { extractTraceContext, type TraceContext } from "@mcp-tasks/core";
import { isJsonContentType, SUPPORTED_PROTOCOL_VERSIONS } from "@modelcontextprotocol/server";

/** Read access to the request headers (a `Headers`, or a view of `node:http` headers). */
export interface HeaderReader {
  get(name: string): string | null;
}

/** A session's `tasks/get` that needs nothing from the SDK transport. */
export interface DirectTaskGet {
  readonly id: string | number;
  readonly params: Record<string, unknown>;
  readonly traceContext?: TraceContext;
}

const MESSAGE_KEYS: ReadonlySet<string> = new Set(["jsonrpc", "id", "method", "params"]);

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** A session's task-augmented `tools/call` that needs nothing from the SDK transport. */
export interface DirectToolCall {
  readonly id: string | number;
  readonly name: string;
  readonly params: Record<string, unknown>;
  readonly progressToken?: string | number;
  readonly traceContext?: TraceContext;
}

const CALL_KEYS: ReadonlySet<string> = new Set(["name", "arguments", "task", "_meta"]);
const CALL_META_KEYS: ReadonlySet<string> = new Set(["progressToken", "traceparent", "tracestate"]);

/**
 * A plain request of `method` the session transport would hand to its handler unchanged:
 * `Accept` names both JSON and SSE, a JSON `Content-Type`, a supported (or absent)
 * `MCP-Protocol-Version`, one plain request (`jsonrpc`, `id`, `method`, `params` only) with
 * a string or safe-integer id and object params. With the W3C trace context of the headers.
 */
function plainSessionRequest(
  headers: HeaderReader,
  body: unknown,
  method: string,
):
  | { id: string | number; params: Record<string, unknown>; traceContext: TraceContext | null }
  | undefined {
  if (!isPlainObject(body) || body.method !== method || body.jsonrpc !== "2.0") {
    return undefined;
  }
  for (const key in body) if (!MESSAGE_KEYS.has(key)) return undefined;
  const id = body.id;
  if (typeof id !== "string" && !Number.isSafeInteger(id)) return undefined;
  const params = body.params;
  if (!isPlainObject(params)) return undefined;
  const accept = headers.get("accept");
  if (!accept?.includes("application/json") || !accept.includes("text/event-stream")) {
    return undefined;
  }
  if (!isJsonContentType(headers.get("content-type"))) return undefined;
  const version = headers.get("mcp-protocol-version");
  if (version !== null && !SUPPORTED_PROTOCOL_VERSIONS.includes(version)) return undefined;
  const traceparent = headers.get("traceparent");
  const traceContext =
    traceparent === null
      ? null
      : extractTraceContext({ traceparent, tracestate: headers.get("tracestate") });
  return { id: id as string | number, params, traceContext };
}

/**
 * Whether a parsed POST body is a `tasks/get` the session transport would hand to the
 * handler unchanged (see {@link plainSessionRequest}) whose `params.taskId` is a string.
 * Anything else returns `undefined` and goes through the transport, which answers it as it
 * always has.
 */
export function matchDirectTaskGet(
  headers: HeaderReader,
  body: unknown,
): DirectTaskGet | undefined {
  const request = plainSessionRequest(headers, body, "tasks/get");
  if (request === undefined || typeof request.params.taskId !== "string") return undefined;
  const { id, params, traceContext } = request;
  return { id, params, ...(traceContext !== null && { traceContext }) };
}

/**
 * Whether a parsed POST body is a task-augmented `tools/call` the session transport would
 * hand to the handler unchanged (see {@link plainSessionRequest}), in the plainest shape:
 * `params` with only `name` (a non-empty string), `arguments` (a plain object), `task`
 * (only an optional non-negative integer `ttl`) and `_meta` (only a string or integer
 * `progressToken` and string `traceparent` / `tracestate`). Whether the tool makes it a
 * task is the session's to decide. Anything else returns `undefined` and goes through the
 * transport.
 */
export function matchDirectToolCall(
  headers: HeaderReader,
  body: unknown,
): DirectToolCall | undefined {
  const request = plainSessionRequest(headers, body, "tools/call");
  if (request === undefined) return undefined;
  const { id, params, traceContext } = request;
  for (const key in params) if (!CALL_KEYS.has(key)) return undefined;
  const name = params.name;
  if (typeof name !== "string" || name.length === 0) return undefined;
  const args = params.arguments;
  // The SDK's record schema would turn an own `__proto__` key into a prototype.
  if (args !== undefined && (!isPlainObject(args) || Object.hasOwn(args, "__proto__"))) {
    return undefined;
  }
  const task = params.task;
  if (!isPlainObject(task)) return undefined;
  for (const key in task) if (key !== "ttl") return undefined;
  if (task.ttl !== undefined && !(Number.isSafeInteger(task.ttl) && (task.ttl as number) >= 0)) {
    return undefined;
  }
  let progressToken: string | number | undefined;
  const meta = params._meta;
  if (meta !== undefined) {
    if (!isPlainObject(meta)) return undefined;
    for (const key in meta) if (!CALL_META_KEYS.has(key)) return undefined;
    const token = meta.progressToken;
    if (token !== undefined && typeof token !== "string" && !Number.isSafeInteger(token)) {
      return undefined;
    }
    if (meta.traceparent !== undefined && typeof meta.traceparent !== "string") return undefined;
    if (meta.tracestate !== undefined && typeof meta.tracestate !== "string") return undefined;
    progressToken = token as string | number | undefined;
  }
  return {
    id,
    name,
    params,
    ...(progressToken !== undefined && { progressToken }),
    ...(traceContext !== null && { traceContext }),
  };
}

/** The headers of the transport's SSE answer to a POST of a session. */
export function sseAnswerHeaders(sessionId: string): Record<string, string> {
  return {
    "Content-Type": "text/event-stream",
    "Cache-Control": "no-cache, no-transform",
    Connection: "keep-alive",
    "X-Accel-Buffering": "no",
    "mcp-session-id": sessionId,
  };
}

/** One JSON-RPC message as the transport frames it on a POST's SSE answer. */
export function sseMessage(message: unknown): string {
  return `event: message\ndata: ${JSON.stringify(message)}\n\n`;
}
