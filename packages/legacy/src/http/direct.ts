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

/**
 * Whether a parsed POST body is a `tasks/get` the session transport would hand to the
 * handler unchanged: `Accept` names both JSON and SSE, a JSON `Content-Type`, a supported
 * (or absent) `MCP-Protocol-Version`, one plain request (`jsonrpc`, `id`, `method`,
 * `params` only) whose `params.taskId` is a string. Anything else returns `undefined` and
 * goes through the transport, which answers it as it always has.
 */
export function matchDirectTaskGet(
  headers: HeaderReader,
  body: unknown,
): DirectTaskGet | undefined {
  if (!isPlainObject(body) || body.method !== "tasks/get" || body.jsonrpc !== "2.0") {
    return undefined;
  }
  for (const key in body) if (!MESSAGE_KEYS.has(key)) return undefined;
  const id = body.id;
  if (typeof id !== "string" && !Number.isSafeInteger(id)) return undefined;
  const params = body.params;
  if (!isPlainObject(params) || typeof params.taskId !== "string") return undefined;
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
  return {
    id: id as string | number,
    params,
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
