/**
 * W3C Trace Context (https://www.w3.org/TR/trace-context/) as a task carries it: the
 * `traceparent` (and optional `tracestate`) of the request that created the task, so that
 * every run of the task, on whatever node, continues that trace. Pure string checks, no
 * OpenTelemetry types: a store persists the two strings as they are.
 */

/** The trace context stored with a task. Both strings are valid W3C values. */
export interface TraceContext {
  /** `00-<32 hex trace id>-<16 hex parent id>-<2 hex flags>`, lowercase. */
  readonly traceparent: string;
  /** The vendor list, when the creating request had a valid one. */
  readonly tracestate?: string;
}

// version-traceid-parentid-flags, lowercase hex only (the spec rejects uppercase).
const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/;
const ZERO_TRACE_ID = "0".repeat(32);
const ZERO_SPAN_ID = "0".repeat(16);
/** The longest tracestate kept: what the spec asks every vendor to propagate. */
const MAX_TRACESTATE_LENGTH = 512;
const MAX_TRACESTATE_MEMBERS = 32;
const SIMPLE_KEY = /^[a-z][a-z0-9_\-*/]{0,255}$/;
const TENANT_KEY = /^[a-z0-9][a-z0-9_\-*/]{0,240}@[a-z][a-z0-9_\-*/]{0,13}$/;
// 1-256 printable ASCII characters but ',' and '=', not ending in a space.
const VALUE = /^[\x20-\x2b\x2d-\x3c\x3e-\x7e]{0,255}[\x21-\x2b\x2d-\x3c\x3e-\x7e]$/;

/**
 * The normalized `traceparent` (version `00`), or `null` when `value` is not a valid one:
 * not a string, malformed, version `ff`, an all-zero trace or parent id, or a version-00
 * value with extra fields. A higher version is read as version 00 (its first four fields),
 * as the spec asks of a version-00 parser.
 */
export function parseTraceparent(value: unknown): string | null {
  if (typeof value !== "string" || value.length < 55 || value.length > 512) return null;
  const match = TRACEPARENT.exec(value);
  if (match === null) return null;
  const [, version, traceId, parentId, flags, rest] = match;
  if (version === "ff" || traceId === ZERO_TRACE_ID || parentId === ZERO_SPAN_ID) return null;
  if (version === "00" && rest !== undefined) return null;
  return version === "00" ? value : `00-${traceId}-${parentId}-${flags}`;
}

/**
 * The `tracestate` as received when it is a valid list (at most 32 members of valid keys
 * and values, each key once, at most 512 characters), else `null`. Empty members and the
 * spaces around members are allowed, as the spec allows them.
 */
export function parseTracestate(value: unknown): string | null {
  if (typeof value !== "string" || value.length > MAX_TRACESTATE_LENGTH) return null;
  const keys = new Set<string>();
  for (const raw of value.split(",")) {
    const member = raw.trim();
    if (member.length === 0) continue;
    const eq = member.indexOf("=");
    if (eq <= 0) return null;
    const key = member.slice(0, eq);
    if (!(SIMPLE_KEY.test(key) || TENANT_KEY.test(key))) return null;
    if (!VALUE.test(member.slice(eq + 1))) return null;
    if (keys.has(key)) return null;
    keys.add(key);
  }
  if (keys.size === 0 || keys.size > MAX_TRACESTATE_MEMBERS) return null;
  return value.trim();
}

/**
 * The trace context carried by a `_meta` object or a header bag (`traceparent` and
 * `tracestate` keys, as the MCP trace-context convention and W3C headers name them), or
 * `null` when there is no valid `traceparent`. Never throws: a client's bad value is
 * ignored, not an error. An invalid `tracestate` is dropped on its own, as the spec says.
 */
export function extractTraceContext(carrier: unknown): TraceContext | null {
  if (typeof carrier !== "object" || carrier === null) return null;
  const { traceparent, tracestate } = carrier as { traceparent?: unknown; tracestate?: unknown };
  return toTraceContext(traceparent, tracestate);
}

/**
 * A checked trace context from `traceparent` and `tracestate` values of unknown shape (a
 * store's input, a database row): `null` unless `traceparent` is valid.
 */
export function toTraceContext(traceparent: unknown, tracestate?: unknown): TraceContext | null {
  const parent = parseTraceparent(traceparent);
  if (parent === null) return null;
  const state =
    tracestate === undefined || tracestate === null ? null : parseTracestate(tracestate);
  return state === null ? { traceparent: parent } : { traceparent: parent, tracestate: state };
}

/**
 * The trace context of an MCP request: its `params._meta` (`traceparent` / `tracestate`, the
 * MCP trace-context convention, whatever the transport) first, else what the transport
 * found (e.g. the HTTP `traceparent` header), else `null`. Checked either way.
 */
export function requestTraceContext(
  params: unknown,
  transport?: TraceContext | null,
): TraceContext | null {
  const meta =
    typeof params === "object" && params !== null ? (params as { _meta?: unknown })._meta : null;
  return extractTraceContext(meta) ?? extractTraceContext(transport);
}
