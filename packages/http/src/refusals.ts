import { MODERN_PROTOCOL_VERSION, TOO_DEEP_ANSWER } from "@mcp-tasks/extension";

/**
 * Every answer the HTTP edge gives without reaching an era, in one table, so one fault gets
 * one answer whichever era the client speaks. Status, code and message follow what
 * `@modelcontextprotocol/server` answers for the same fault (its transports, `createMcpHandler`,
 * `hostHeaderValidationResponse`, `createMcpHonoApp`): `-32000` for HTTP-level refusals,
 * `-32001` for authentication, `-32603` for an internal error.
 */
export type RefusalKind =
  | "method-not-allowed"
  | "invalid-host-header"
  | "host-not-allowed"
  | "origin-not-allowed"
  | "unauthenticated"
  | "forbidden"
  | "unsupported-media-type"
  | "parse-error"
  | "body-too-large"
  | "body-too-deep"
  | "body-timeout"
  | "era-not-served"
  | "shutting-down"
  | "internal-error"
  | "invalid-identity"
  | LimitKind;

/**
 * The per-owner limits of the edge (see `OwnerLimitsOptions`): each refusal says which in
 * `data.reason`, with `data.retryAfterMs`, and is worth retrying later.
 */
export type LimitKind =
  | "rate-limited"
  | "too-many-sessions"
  | "too-many-streams"
  | "too-many-subscriptions"
  | "too-many-waits";

/** The `data.reason` of each limit refusal, as clients read it (the same in both eras). */
export const LIMIT_REASONS: Readonly<Record<LimitKind, string>> = Object.freeze({
  "rate-limited": "rate_limited",
  "too-many-sessions": "too_many_sessions",
  "too-many-streams": "too_many_streams",
  "too-many-subscriptions": "too_many_subscriptions",
  "too-many-waits": "too_many_waits",
});

const LIMIT_MESSAGES: Readonly<Record<LimitKind, string>> = Object.freeze({
  "rate-limited": "Too many requests from this owner",
  "too-many-sessions": "Too many open 2025-11-25 sessions for this owner",
  "too-many-streams": "Too many open subscriptions/listen streams for this owner",
  "too-many-subscriptions": "Too many subscribed task ids for this owner",
  "too-many-waits": "Too many blocking tasks/result waits for this owner",
});

/** True for the refusals of a per-owner limit (retryable, `429` or in-band `-32603`). */
export function isLimitKind(kind: RefusalKind): kind is LimitKind {
  return kind in LIMIT_REASONS;
}

/**
 * One refusal as it goes on the wire: an HTTP status and a JSON-RPC error with `id: null`
 * (or, answered in band, the request's `id`: see {@link inBand}).
 */
export interface Refusal {
  readonly kind: RefusalKind;
  /** The JSON-RPC id of the refused request, when it is answered in band. */
  readonly id?: string | number;
  readonly status: number;
  readonly code: number;
  readonly message: string;
  readonly data?: unknown;
  /** Extra response headers (`Allow`, `WWW-Authenticate`, `Connection: close`). */
  readonly headers?: Readonly<Record<string, string>>;
}

/** The methods of a Streamable HTTP MCP endpoint; anything else is `405` with `Allow`. */
export const ALLOWED_METHODS = "GET, POST, DELETE";
const LEGACY_PROTOCOL_VERSION = "2025-11-25";

/** What each refusal needs to say more than its kind. */
export interface RefusalDetail {
  /** The validator's message (Host, Origin) or the owner resolver's (401/403). */
  readonly message?: string;
  /** The body limit in bytes (`body-too-large`) or the body timeout in ms (`body-timeout`). */
  readonly limit?: number;
  /** `WWW-Authenticate` value for `unauthenticated`. */
  readonly challenge?: string;
  /** Why the 2025-11-25 era is not served (`era-not-served`). */
  readonly reason?: string;
  /** The methods served (`method-not-allowed`); default `GET, POST, DELETE`. */
  readonly allow?: string;
  /** When a limit refusal is worth retrying, in ms (`Retry-After`, `data.retryAfterMs`). */
  readonly retryAfterMs?: number;
}

/** Builds the refusal of a kind: the one place its status, code and message are decided. */
export function refusal(kind: RefusalKind, detail: RefusalDetail = {}): Refusal {
  switch (kind) {
    case "method-not-allowed": {
      const allow = detail.allow ?? ALLOWED_METHODS;
      return {
        kind,
        status: 405,
        code: -32000,
        message: `Method not allowed: use ${allow}`,
        headers: { Allow: allow },
      };
    }
    case "invalid-host-header":
      return { kind, status: 400, code: -32000, message: detail.message ?? "Invalid Host header" };
    case "host-not-allowed":
      return { kind, status: 403, code: -32000, message: detail.message ?? "Invalid Host" };
    case "origin-not-allowed":
      return { kind, status: 403, code: -32000, message: detail.message ?? "Invalid Origin" };
    case "unauthenticated":
      return {
        kind,
        status: 401,
        code: -32001,
        message: detail.message ?? "Authentication required",
        headers: { "WWW-Authenticate": detail.challenge ?? "Bearer" },
      };
    case "forbidden":
      return { kind, status: 403, code: -32001, message: detail.message ?? "Forbidden" };
    case "unsupported-media-type":
      return {
        kind,
        status: 415,
        code: -32000,
        message: "Unsupported Media Type: Content-Type must be application/json",
      };
    case "parse-error":
      return { kind, status: 400, code: -32700, message: "Parse error: Invalid JSON" };
    case "body-too-large":
      return {
        kind,
        status: 413,
        code: -32000,
        message: `Payload Too Large: Request body must not exceed ${detail.limit} bytes`,
        headers: { Connection: "close" },
      };
    case "body-too-deep":
      // The extension's answer (`MAX_JSON_DEPTH`), the same in both eras.
      return {
        kind,
        status: 400,
        code: TOO_DEEP_ANSWER.error.code,
        message: TOO_DEEP_ANSWER.error.message,
      };
    case "body-timeout":
      return {
        kind,
        status: 408,
        code: -32000,
        message: `Request Timeout: the request body did not arrive within ${detail.limit} ms`,
        headers: { Connection: "close" },
      };
    case "era-not-served":
      return {
        kind,
        status: 400,
        code: -32022,
        message: `Unsupported protocol version: the ${LEGACY_PROTOCOL_VERSION} era is not served${
          detail.reason === undefined ? "" : ` (${detail.reason})`
        }; use ${MODERN_PROTOCOL_VERSION}`,
        data: { supported: [MODERN_PROTOCOL_VERSION] },
      };
    case "shutting-down":
      return { kind, status: 503, code: -32000, message: "Server is shutting down" };
    case "internal-error":
      return { kind, status: 500, code: -32603, message: "Internal error" };
    case "invalid-identity":
      return { kind, status: 400, code: -32000, message: detail.message ?? "Bad Request" };
    default: {
      // A per-owner limit: retryable, `429` with `Retry-After` (whole seconds, at least 1),
      // and the same `-32603` error with `data.reason` and `data.retryAfterMs` in the body.
      const retryAfterMs = Math.max(0, Math.ceil(detail.retryAfterMs ?? 1000));
      return {
        kind,
        status: 429,
        code: -32603,
        message: `${LIMIT_MESSAGES[kind]}${detail.limit === undefined ? "" : ` (limit ${detail.limit})`}; retry after ${retryAfterMs} ms`,
        data: {
          reason: LIMIT_REASONS[kind],
          retryAfterMs,
          ...(detail.limit !== undefined && { limit: detail.limit }),
        },
        headers: { "Retry-After": String(Math.max(1, Math.ceil(retryAfterMs / 1000))) },
      };
    }
  }
}

/**
 * A refusal answered in band, as the JSON-RPC error of the request `id` with HTTP `200`
 * (its headers, e.g. `Retry-After`, kept): how a per-owner limit answers a request that
 * carries an id, so that the client's request fails with the `-32603` error and its
 * `data.reason` rather than with a transport error. Without an id, the refusal as it is.
 */
export function inBand(r: Refusal, id: string | number | undefined): Refusal {
  return id === undefined ? r : { ...r, status: 200, id };
}

/** The JSON-RPC error body of a refusal. */
export function refusalBody(r: Refusal): string {
  return JSON.stringify({
    jsonrpc: "2.0",
    id: r.id ?? null,
    error: { code: r.code, message: r.message, ...(r.data !== undefined && { data: r.data }) },
  });
}

/** A refusal as a web `Response`. */
export function refusalResponse(r: Refusal): Response {
  return new Response(refusalBody(r), {
    status: r.status,
    headers: { "Content-Type": "application/json", ...r.headers },
  });
}
