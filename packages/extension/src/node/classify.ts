import type { IncomingHttpHeaders } from "node:http";
import {
  classifyInboundRequest,
  type InboundClassificationOutcome,
  SUPPORTED_PROTOCOL_VERSIONS,
} from "@modelcontextprotocol/server";
import { MODERN_PROTOCOL_VERSION, PROTOCOL_VERSION_META_KEY } from "../constants.js";
import { isPlainObject, single } from "./guards.js";

type Classification = Extract<InboundClassificationOutcome, { kind: "modern" }>["classification"];

const REQUEST_KEYS: ReadonlySet<string> = new Set(["jsonrpc", "id", "method", "params"]);
/** Distinct envelopes remembered; clients send the same few, so this rarely fills. */
const MAX_REMEMBERED = 512;
/**
 * Longest envelope text remembered (a client's is a few hundred bytes): a longer one is
 * classified every time, so that 512 of them cannot hold on to a body's size each.
 */
const MAX_REMEMBERED_TEXT = 4096;
/** Envelopes compared before the text is made (see `RequestClassifier`). */
const MAX_RECENT = 4;
/** Deepest nesting compared; an envelope nests a few levels. */
const MAX_COMPARED_DEPTH = 32;

/** The SDK's verdict on a method with an envelope (`null`: not a plain modern request). */
interface Verdict {
  readonly method: string;
  readonly meta: Record<string, unknown>;
  readonly classification: Classification | null;
}

/**
 * A plain JSON-RPC request other than `initialize`: only `jsonrpc`, `id`, `method` and
 * `params` keys, a string or safe-integer id; the shape both fast verdicts start from.
 */
function plainRequest(body: unknown): { method: string; params: unknown } | undefined {
  if (!isPlainObject(body) || body.jsonrpc !== "2.0") return undefined;
  for (const key in body) if (!REQUEST_KEYS.has(key)) return undefined;
  const { id, method, params } = body;
  if (typeof id !== "string" && !Number.isSafeInteger(id)) return undefined;
  if (typeof method !== "string" || method === "initialize") return undefined;
  return { method, params };
}

/**
 * `classifyInboundRequest` of `@modelcontextprotocol/server` for a `node:http` POST whose
 * body is already parsed, with the same outcome, made cheap for the common case.
 *
 * The SDK validates the whole message and its `_meta` envelope with zod schemas on every
 * request (the largest cost of a poll after the socket write). For a plain 2026-07-28
 * request — only `jsonrpc`, `id`, `method` and `params` keys, a string or safe-integer id,
 * not `initialize`, headers agreeing with the body — the outcome depends only on the method
 * and the `_meta` object, so it is computed once per distinct (method, `_meta`) by the SDK
 * itself and remembered; the last few are found again by comparing objects, the others by
 * their text. A plain 2025-era request (no `_meta` in its params, no or a
 * 2025-era `MCP-Protocol-Version`) is legacy without a schema run: the SDK's request schema
 * checks nothing else of such a message. Everything else is classified by the SDK directly.
 */
export class RequestClassifier {
  /** The SDK's verdicts by method and `_meta` text. */
  readonly #modern = new Map<string, Verdict>();
  /**
   * The verdicts used last, most recent first, each found again by comparing the `_meta`
   * objects: a client sends the same envelope every time, and comparing it costs less than
   * turning it into the map's key (a `JSON.stringify`, 2–3 % of a task-creating `tools/call`).
   */
  readonly #recent: Verdict[] = [];

  classify(headers: IncomingHttpHeaders, body: unknown): InboundClassificationOutcome {
    const protocolVersionHeader = single(headers["mcp-protocol-version"]);
    const mcpMethodHeader = single(headers["mcp-method"]);
    const fast =
      this.#plainModern(body, protocolVersionHeader, mcpMethodHeader) ??
      plainLegacy(body, protocolVersionHeader);
    if (fast !== undefined) return fast;
    const mcpNameHeader = single(headers["mcp-name"]);
    return classifyInboundRequest({
      httpMethod: "POST",
      ...(protocolVersionHeader !== undefined && { protocolVersionHeader }),
      ...(mcpMethodHeader !== undefined && { mcpMethodHeader }),
      ...(mcpNameHeader !== undefined && { mcpNameHeader }),
      body,
    });
  }

  #plainModern(
    body: unknown,
    versionHeader: string | undefined,
    methodHeader: string | undefined,
  ): InboundClassificationOutcome | undefined {
    const request = plainRequest(body);
    if (request === undefined || !isPlainObject(request.params)) return undefined;
    const { method, params } = request;
    const meta = params._meta;
    if (!isPlainObject(meta) || meta[PROTOCOL_VERSION_META_KEY] !== MODERN_PROTOCOL_VERSION) {
      return undefined;
    }
    if (versionHeader !== undefined && versionHeader !== MODERN_PROTOCOL_VERSION) return undefined;
    if (methodHeader !== undefined && methodHeader !== method) return undefined;
    const { classification } = this.#verdict(method, meta);
    if (classification === null) return undefined;
    return {
      kind: "modern",
      messageKind: "request",
      message: body as never,
      classification: { ...classification },
    };
  }

  /** The SDK's verdict on `method` with the envelope `meta`, remembered. */
  #verdict(method: string, meta: Record<string, unknown>): Verdict {
    const recent = this.#recent;
    for (let i = 0; i < recent.length; i++) {
      const verdict = recent[i] as Verdict;
      if (verdict.method === method && sameJson(verdict.meta, meta, 0)) {
        if (i > 0) {
          recent.splice(i, 1);
          recent.unshift(verdict);
        }
        return verdict;
      }
    }
    const metaText = JSON.stringify(meta);
    const key = `${method}\u0000${metaText}`;
    let verdict = this.#modern.get(key);
    if (verdict === undefined) {
      // The SDK's verdict on the same method and envelope, without the request's own params.
      const outcome = classifyInboundRequest({
        httpMethod: "POST",
        body: { jsonrpc: "2.0", id: 0, method, params: { _meta: meta } },
      });
      const classification =
        outcome.kind === "modern" && outcome.messageKind === "request"
          ? outcome.classification
          : null;
      if (metaText.length > MAX_REMEMBERED_TEXT) return { method, meta, classification };
      // A copy of its own: the request's objects are the request's.
      verdict = { method, meta: JSON.parse(metaText) as Record<string, unknown>, classification };
      if (this.#modern.size >= MAX_REMEMBERED) this.#modern.clear();
      this.#modern.set(key, verdict);
    }
    recent.unshift(verdict);
    if (recent.length > MAX_RECENT) recent.pop();
    return verdict;
  }
}

/**
 * Whether two JSON values are equal: the same primitives, arrays of equal items, objects
 * with the same own keys and equal values (in any order, as the SDK's schemas read them).
 * Deeper than {@link MAX_COMPARED_DEPTH}, not equal (the caller then compares the text).
 */
function sameJson(a: unknown, b: unknown, depth: number): boolean {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (depth >= MAX_COMPARED_DEPTH) return false;
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!sameJson(a[i], b[i], depth + 1)) return false;
    return true;
  }
  const x = a as Record<string, unknown>;
  const y = b as Record<string, unknown>;
  let keys = 0;
  for (const key in x) {
    if (!Object.hasOwn(x, key)) continue;
    if (!Object.hasOwn(y, key) || !sameJson(x[key], y[key], depth + 1)) return false;
    keys++;
  }
  for (const key in y) if (Object.hasOwn(y, key)) keys--;
  return keys === 0;
}

/** The SDK's answer for a plain request without an envelope: legacy, `no-claim`. */
function plainLegacy(
  body: unknown,
  versionHeader: string | undefined,
): InboundClassificationOutcome | undefined {
  const request = plainRequest(body);
  if (request === undefined) return undefined;
  const { params } = request;
  if (params !== undefined && (!isPlainObject(params) || "_meta" in params)) return undefined;
  if (versionHeader !== undefined && !SUPPORTED_PROTOCOL_VERSIONS.includes(versionHeader)) {
    return undefined;
  }
  return {
    kind: "legacy",
    reason: "no-claim",
    ...(versionHeader !== undefined && { requestedVersion: versionHeader }),
  };
}
