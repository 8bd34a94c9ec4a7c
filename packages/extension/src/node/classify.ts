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
 * itself and remembered. A plain 2025-era request (no `_meta` in its params, no or a
 * 2025-era `MCP-Protocol-Version`) is legacy without a schema run: the SDK's request schema
 * checks nothing else of such a message. Everything else is classified by the SDK directly.
 */
export class RequestClassifier {
  readonly #modern = new Map<string, Classification | null>();

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
    const key = `${method}\u0000${JSON.stringify(meta)}`;
    let classification = this.#modern.get(key);
    if (classification === undefined) {
      // The SDK's verdict on the same method and envelope, without the request's own params.
      const outcome = classifyInboundRequest({
        httpMethod: "POST",
        body: { jsonrpc: "2.0", id: 0, method, params: { _meta: meta } },
      });
      classification =
        outcome.kind === "modern" && outcome.messageKind === "request"
          ? outcome.classification
          : null;
      if (this.#modern.size >= MAX_REMEMBERED) this.#modern.clear();
      this.#modern.set(key, classification);
    }
    if (classification === null) return undefined;
    return {
      kind: "modern",
      messageKind: "request",
      message: body as never,
      classification: { ...classification },
    };
  }
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
