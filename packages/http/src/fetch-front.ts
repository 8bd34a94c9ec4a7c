import type { Owner } from "@mcp-tasks/core";
import { handleTaskListenRequest, nestsDeeperThan } from "@mcp-tasks/extension";
import {
  type AuthInfo,
  classifyInboundRequest,
  isJsonContentType,
  readRequestBody,
} from "@modelcontextprotocol/server";
import type { Edge } from "./edge.js";
import { releaseWhenDone } from "./held-response.js";
import { isLimitRefusal, NO_HOLD } from "./limits.js";
import { reportSession } from "./node-front.js";
import { callerOf, isRefusal } from "./owner.js";
import { type Refusal, refusal, refusalResponse } from "./refusals.js";

/** Per-request input of a web-standard request. */
export interface FetchRequestExtra {
  /** Who the framework authenticated (e.g. `requireBearerAuth` of `@modelcontextprotocol/server`). */
  readonly authInfo?: AuthInfo;
  /**
   * The body, when a framework already parsed it (`c.get("parsedBody")` of
   * `createMcpHonoApp`); the request's own body is then not read.
   */
  readonly parsedBody?: unknown;
}

/** A body read once from a web `Request`. */
type FetchBody =
  | { readonly kind: "json"; readonly value: unknown }
  | { readonly kind: "empty" }
  | { readonly kind: "invalid"; readonly text: string };

function header(request: Request, name: string): string | undefined {
  return request.headers.get(name) ?? undefined;
}

/** The `Host` of a web request: the header, else the URL's (fetch runtimes may drop it). */
function hostOf(request: Request): string | undefined {
  const host = request.headers.get("host");
  if (host !== null) return host;
  try {
    return new URL(request.url).host;
  } catch {
    return undefined;
  }
}

/** Reads the body once, within the size limit and the body timeout. */
async function readBody(edge: Edge, request: Request): Promise<FetchBody | Refusal> {
  const reading = readRequestBody(request, edge.maxBodyBytes);
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout =
    edge.bodyTimeoutMs > 0
      ? new Promise<"timeout">((resolve) => {
          timer = setTimeout(() => resolve("timeout"), edge.bodyTimeoutMs);
        })
      : undefined;
  try {
    const read = await (timeout === undefined ? reading : Promise.race([reading, timeout]));
    if (read === "timeout") {
      reading.catch(() => {});
      request.body?.cancel().catch(() => {});
      return refusal("body-timeout", { limit: edge.bodyTimeoutMs });
    }
    if (read.tooLarge) return refusal("body-too-large", { limit: edge.maxBodyBytes });
    if (read.text.length === 0) return { kind: "empty" };
    if (nestsDeeperThan(read.text)) return refusal("body-too-deep");
    try {
      return { kind: "json", value: JSON.parse(read.text) };
    } catch {
      return { kind: "invalid", text: read.text };
    }
  } finally {
    clearTimeout(timer);
  }
}

/** The request again, for a leg: its body is the parsed one (or the bytes that are not JSON). */
function forwarded(request: Request, body: FetchBody): Request {
  if (request.method !== "POST" || request.bodyUsed === false) return request;
  return new Request(request.url, {
    method: request.method,
    headers: request.headers,
    signal: request.signal,
    ...(body.kind === "invalid" && { body: body.text }),
  });
}

function refuse(edge: Edge, request: Request, r: Refusal): Response {
  edge.refused(r, request.method);
  return refusalResponse(r);
}

/**
 * Serves one web-standard request of the endpoint: the same checks, refusals and era routing
 * as on `node:http`; the 2026-07-28 era goes to the SDK's `createMcpHandler` (task listen
 * streams to the extension), 2025-11-25 to the sessions of `createLegacyHandler`.
 */
export async function serveFetch(
  edge: Edge,
  request: Request,
  extra: FetchRequestExtra,
): Promise<Response> {
  const method = request.method;
  const headRefusal = edge.guards.check(method, hostOf(request), header(request, "origin"));
  if (headRefusal !== undefined) return refuse(edge, request, headRefusal);
  if (edge.closed) return refuse(edge, request, refusal("shutting-down"));
  const caller = await callerOf(request, extra.authInfo, edge.caller);
  if (isRefusal(caller)) return refuse(edge, request, caller);
  let body: FetchBody = { kind: "empty" };
  if (method === "POST") {
    if (!isJsonContentType(request.headers.get("content-type"))) {
      return refuse(edge, request, refusal("unsupported-media-type"));
    }
    if (extra.parsedBody !== undefined) body = { kind: "json", value: extra.parsedBody };
    else {
      const read = await readBody(edge, request);
      if ("status" in read) return refuse(edge, request, read);
      body = read;
    }
  }
  const parsed = body.kind === "json" ? body.value : undefined;
  const rated = edge.rateRefusal(caller, parsed);
  if (rated !== undefined) return refuse(edge, request, rated);
  const route =
    method === "POST" && body.kind === "json"
      ? classifyInboundRequest({
          httpMethod: "POST",
          ...optionalHeader("protocolVersionHeader", header(request, "mcp-protocol-version")),
          ...optionalHeader("mcpMethodHeader", header(request, "mcp-method")),
          ...optionalHeader("mcpNameHeader", header(request, "mcp-name")),
          body: parsed,
        })
      : undefined;
  if (route === undefined || route.kind === "legacy") {
    return serveLegacy(edge, forwarded(request, body), body, caller, extra.authInfo);
  }
  const held = edge.holdModern(caller, parsed);
  if (isLimitRefusal(held)) return refuse(edge, request, held);
  edge.routed({
    era: "modern",
    httpMethod: method,
    body: parsed,
    sessionId: undefined,
    owner: caller,
  });
  let response: Response;
  try {
    response =
      (await handleTaskListenRequest(request, edge.extension, caller, {
        parsedBody: parsed,
        keepAliveMs: edge.keepAliveMs,
      })) ??
      (await edge.modernFetch.fetch(forwarded(request, body), {
        authInfo: edge.authInfoFor(caller, extra.authInfo),
        parsedBody: parsed,
      }));
  } catch (error) {
    held();
    throw error;
  }
  // A listen stream holds its slot until its body ends (or the client cancels it).
  return held === NO_HOLD ? response : releaseWhenDone(response, held);
}

function optionalHeader<K extends string>(key: K, value: string | undefined) {
  return (value === undefined ? {} : { [key]: value }) as { [P in K]?: string };
}

async function serveLegacy(
  edge: Edge,
  request: Request,
  body: FetchBody,
  caller: Owner,
  authInfo: AuthInfo | undefined,
): Promise<Response> {
  const legacy = edge.legacy;
  const method = request.method;
  if (legacy === undefined) {
    return refuse(edge, request, edge.eraNotServed(method, body.kind === "invalid"));
  }
  const parsed = body.kind === "json" ? body.value : undefined;
  const sessionId = header(request, "mcp-session-id");
  const hold = edge.holdLegacy(caller, method, parsed, sessionId);
  if ("status" in hold) return refuse(edge, request, hold);
  edge.routed({ era: "legacy", httpMethod: method, body: parsed, sessionId, owner: caller });
  edge.owners.set(request, caller);
  let response: Response | undefined;
  try {
    response = await legacy.fetch(request, {
      ...(parsed !== undefined && { parsedBody: parsed }),
      ...(authInfo !== undefined && { authInfo }),
    });
  } catch (error) {
    hold.waits();
    throw error;
  } finally {
    edge.sessionAnswered(hold, response);
  }
  reportSession(edge, sessionId, parsed, response);
  // `tasks/result` waits are held until the response ends.
  return hold.waits === NO_HOLD ? response : releaseWhenDone(response, hold.waits);
}
