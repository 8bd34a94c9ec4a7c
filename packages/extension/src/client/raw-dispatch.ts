import { MODERN_PROTOCOL_VERSION, PROTOCOL_VERSION_META_KEY } from "../constants.js";
import { readAnswer } from "./response.js";
import { encodeRoutingHeader } from "./routing-header.js";
import type { JsonValue, RawDispatch, RawDispatchResponse } from "./types.js";

/** A value given once, or computed per request (e.g. a token that is refreshed). */
export type PerRequest<T> = T | (() => T | Promise<T>);

/** Options of {@link createRawDispatch}. */
export interface RawDispatchOptions {
  /** The server's MCP endpoint, e.g. `http://127.0.0.1:3000/mcp`. */
  readonly url: string | URL;
  /** Sent as `Authorization: Bearer <token>` on every request (none when it is `undefined`). */
  readonly token?: PerRequest<string | undefined> | undefined;
  /**
   * Extra headers on every request (e.g. an API key header, or `authorization` in another
   * scheme). A call's own headers (`callTool(…, { headers })`) are sent after them and win;
   * the protocol headers (`MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name`, content type)
   * are always derived from the request and cannot be overridden.
   */
  readonly headers?: PerRequest<Readonly<Record<string, string>>> | undefined;
  /** The `fetch` to send with (default: the global one). */
  readonly fetch?: typeof fetch | undefined;
}

/** The HTTP answer carried no JSON-RPC response (e.g. `401` from an auth layer, a proxy's `502`). */
export class RawDispatchHttpError extends Error {
  override readonly name = "RawDispatchHttpError";
  /** The HTTP status. */
  readonly status: number;
  /** The response headers (e.g. `WWW-Authenticate` on a `401`). */
  readonly headers: Headers;

  constructor(status: number, statusText: string, headers: Headers) {
    super(`HTTP ${status}${statusText ? ` ${statusText}` : ""}: no JSON-RPC response in the body`);
    this.status = status;
    this.headers = headers;
  }
}

const isObject = (value: unknown): value is { readonly [key: string]: JsonValue } =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/**
 * The `Mcp-Name` a 2026-07-28 request must carry, derived from its body so that header and
 * body always agree (a mismatch is `-32020`): the tool or prompt name, the resource URI, or
 * the task id of `tasks/*`.
 */
function routingName(method: string, params: { readonly [key: string]: JsonValue }) {
  const value =
    method === "tools/call" || method === "prompts/get"
      ? params.name
      : method === "resources/read"
        ? params.uri
        : method.startsWith("tasks/")
          ? params.taskId
          : undefined;
  return typeof value === "string" ? encodeRoutingHeader(value) : undefined;
}

const resolve = async <T>(value: PerRequest<T> | undefined): Promise<T | undefined> =>
  typeof value === "function" ? (value as () => T | Promise<T>)() : value;

/**
 * The `rawDispatch` that `@modelcontextprotocol/ext-tasks` needs to talk to a 2026-07-28
 * tasks server over HTTP (`createTaskSessionFromClient(client, { rawDispatch, v2RequestFraming })`).
 *
 * Each request is one JSON-RPC POST to `url` with the 2026-07-28 HTTP headers:
 * `MCP-Protocol-Version` (from the request's `_meta` envelope), `Mcp-Method`, and `Mcp-Name`
 * computed from the body (ext-tasks also passes `Mcp-Name` for `tasks/*`; it is replaced,
 * whatever its case, so the header is sent once and always matches). Auth comes from `token`
 * and `headers`, plus whatever headers the call itself carries. The answer is read from a
 * JSON body or an SSE stream; a JSON-RPC error resolves as `{ kind: "error" }`, while an HTTP
 * answer with no JSON-RPC response in it (say a bare `401`) rejects with
 * {@link RawDispatchHttpError}. `signal` and the call's `requestTimeoutMs` abort the request.
 *
 * Depends on nothing but the web-standard `fetch`, so it runs in Node.js ≥ 20.19, Deno, Bun,
 * browsers and workers, and this entry pulls no server code into a client bundle.
 *
 * @example
 * ```ts
 * const session = createTaskSessionFromClient(client, {
 *   endpointId: "my-server",
 *   rawDispatch: createRawDispatch({ url, token: process.env.MCP_TOKEN }),
 *   v2RequestFraming: { protocolVersion: "2026-07-28", clientInfo, clientCapabilities: {} },
 * });
 * ```
 */
export function createRawDispatch(options: RawDispatchOptions): RawDispatch {
  const send = options.fetch ?? fetch;
  let nextId = 1;
  return async (request, requestOptions) => {
    if (!isObject(request) || typeof request.method !== "string") {
      throw new TypeError("rawDispatch: the request must be a JSON-RPC request object");
    }
    const method = request.method;
    const params = isObject(request.params) ? request.params : {};
    const meta = isObject(params._meta) ? params._meta : {};
    const version = meta[PROTOCOL_VERSION_META_KEY];
    const id = nextId++;

    // Later sources win, case-insensitively: defaults, then the call's own, then protocol.
    const headers = new Headers(await resolve(options.headers));
    const token = await resolve(options.token);
    if (token !== undefined) headers.set("authorization", `Bearer ${token}`);
    for (const [name, value] of Object.entries(requestOptions?.context?.headers ?? {})) {
      headers.set(name, value);
    }
    headers.set("content-type", "application/json");
    headers.set("accept", "application/json, text/event-stream");
    headers.set(
      "mcp-protocol-version",
      typeof version === "string" ? version : MODERN_PROTOCOL_VERSION,
    );
    headers.set("mcp-method", method);
    const name = routingName(method, params);
    if (name === undefined) headers.delete("mcp-name");
    else headers.set("mcp-name", name);

    const timeoutMs = requestOptions?.context?.requestTimeoutMs;
    const signals = [
      ...(requestOptions?.signal ? [requestOptions.signal] : []),
      ...(timeoutMs !== undefined ? [AbortSignal.timeout(timeoutMs)] : []),
    ];
    const signal = signals.length > 1 ? AbortSignal.any(signals) : signals[0];
    const response = await send(options.url, {
      method: "POST",
      headers,
      body: JSON.stringify({ jsonrpc: "2.0", id, method, params: request.params }),
      ...(signal && { signal }),
    });
    const answer = await readAnswer(response, id);
    if (answer?.error !== undefined) return { kind: "error", error: answer.error };
    if (answer !== undefined && "result" in answer) {
      return { kind: "result", result: answer.result ?? null } satisfies RawDispatchResponse;
    }
    throw new RawDispatchHttpError(response.status, response.statusText, response.headers);
  };
}
