import type { IncomingMessage, ServerResponse } from "node:http";
import type { Owner } from "@mcp-tasks/core";
import {
  discardBody,
  type JsonBody,
  readJsonBody,
  webRequestFor,
  writeWebResponse,
} from "@mcp-tasks/extension";
import { type AuthInfo, isJsonContentType } from "@modelcontextprotocol/server";
import type { Edge } from "./edge.js";
import { isLimitRefusal, NO_HOLD } from "./limits.js";
import { initializeClientName } from "./messages.js";
import { callerOf, isRefusal, type RequestHead } from "./owner.js";
import { type Refusal, refusal, refusalBody } from "./refusals.js";

/** Per-request input of a `node:http` (or Express) request. */
export interface NodeRequestExtra {
  /** Who the framework authenticated (`req.auth` is read when this is absent). */
  readonly authInfo?: AuthInfo;
  /**
   * The body, when a framework already parsed it (Express's `express.json()` leaves
   * `req.body` and an empty stream); without it the body is read from the request, once.
   */
  readonly parsedBody?: unknown;
}

const EMPTY: JsonBody = { kind: "empty" };

/**
 * The head of a node request as the web `Request` fields owner resolvers read (`headers`,
 * `method`, `url`), without copying the headers or building a `Request`; it is its own
 * `headers` (`get`/`has` over the node request's already lower-cased headers).
 */
class NodeRequestHead {
  readonly #req: IncomingMessage;
  constructor(req: IncomingMessage) {
    this.#req = req;
  }
  get headers(): Headers {
    return this as unknown as Headers;
  }
  get method(): string {
    return this.#req.method ?? "GET";
  }
  get url(): string {
    return `http://${this.#req.headers.host ?? "localhost"}${this.#req.url ?? "/"}`;
  }
  get(name: string): string | null {
    const value = this.#req.headers[name.toLowerCase()];
    if (value === undefined) return null;
    return Array.isArray(value) ? value.join(", ") : value;
  }
  has(name: string): boolean {
    return this.#req.headers[name.toLowerCase()] !== undefined;
  }
}

function single(value: string | string[] | undefined): string | undefined {
  return typeof value === "string" ? value : undefined;
}

/** Writes a refusal in one write (the body, if unread, drained first so the client hears it). */
async function refuse(edge: Edge, req: IncomingMessage, res: ServerResponse, r: Refusal) {
  edge.refused(r, req.method ?? "GET");
  await discardBody(req);
  writeRefusal(res, r);
}

/** A refusal as a `node:http` answer. */
export function writeRefusal(res: ServerResponse, r: Refusal): void {
  const text = refusalBody(r);
  res.writeHead(r.status, {
    "Content-Type": "application/json",
    "Content-Length": Buffer.byteLength(text),
    ...r.headers,
  });
  res.end(text);
}

/**
 * Reads the body once, within the size limit and the body timeout. On timeout the read is
 * abandoned (the connection is closed after the answer).
 */
async function readBody(edge: Edge, req: IncomingMessage): Promise<JsonBody | "timeout"> {
  // A body that has all arrived (the usual small POST, sent with its headers) needs no
  // timer: the common poll pays nothing for the timeout.
  const announced = Number(req.headers["content-length"] ?? Number.NaN);
  const arrived = req.complete || req.readableLength >= announced;
  const reading = readJsonBody(req, edge.maxBodyBytes);
  if (edge.bodyTimeoutMs <= 0 || arrived) return reading;
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<"timeout">((resolve) => {
    timer = setTimeout(() => resolve("timeout"), edge.bodyTimeoutMs);
  });
  try {
    const outcome = await Promise.race([reading, timeout]);
    if (outcome === "timeout") reading.catch(() => {});
    return outcome;
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Serves one request of the endpoint on `node:http`: method, Host and Origin checks, owner
 * resolution, the content type, the body read once (bounded in size and time), then the era
 * by the parsed body (the SDK's `classifyInboundRequest`): 2026-07-28 to
 * `createNodeTasksHandler`, 2025-11-25 to the sessions of `createLegacyHandler`.
 */
export async function serveNode(
  edge: Edge,
  req: IncomingMessage,
  res: ServerResponse,
  extra: NodeRequestExtra,
): Promise<void> {
  const method = req.method ?? "GET";
  const headRefusal = edge.guards.check(method, req.headers.host, single(req.headers.origin));
  if (headRefusal !== undefined) return refuse(edge, req, res, headRefusal);
  if (edge.closed) return refuse(edge, req, res, refusal("shutting-down"));
  const head: RequestHead = new NodeRequestHead(req);
  const authInfo = extra.authInfo ?? (req as { auth?: AuthInfo }).auth;
  const caller = await callerOf(head, authInfo, edge.caller);
  if (isRefusal(caller)) return refuse(edge, req, res, caller);
  let body: JsonBody = EMPTY;
  if (method === "POST") {
    if (!isJsonContentType(single(req.headers["content-type"]) ?? null)) {
      return refuse(edge, req, res, refusal("unsupported-media-type"));
    }
    if (extra.parsedBody !== undefined) body = { kind: "json", value: extra.parsedBody };
    else {
      const read = await readBody(edge, req);
      if (read === "timeout") {
        const r = refusal("body-timeout", { limit: edge.bodyTimeoutMs });
        edge.refused(r, method);
        res.once("finish", () => req.socket?.destroy());
        return writeRefusal(res, r);
      }
      if (read.kind === "too-deep") {
        const r = refusal("body-too-deep");
        edge.refused(r, method);
        return writeRefusal(res, r);
      }
      if (read.kind === "too-large") {
        const r = refusal("body-too-large", { limit: edge.maxBodyBytes });
        edge.refused(r, method);
        return writeRefusal(res, r);
      }
      body = read;
    }
  }
  const rated = edge.rateRefusal(caller, body.kind === "json" ? body.value : undefined);
  if (rated !== undefined) {
    edge.refused(rated, method);
    return writeRefusal(res, rated);
  }
  // The era, decided as `isLegacyRequest` decides it but from the parsed body: GET, DELETE
  // and bodies that are not JSON go to the legacy leg (which answers -32700 for the latter).
  const route =
    method === "POST" && body.kind === "json"
      ? edge.modern.classify(req.headers, body.value)
      : undefined;
  if (route === undefined || route.kind === "legacy") {
    return serveLegacy(edge, req, res, body, caller, authInfo);
  }
  const parsed = body.kind === "json" ? body.value : undefined;
  const held = edge.holdModern(caller, parsed);
  if (isLimitRefusal(held)) {
    edge.refused(held, method);
    return writeRefusal(res, held);
  }
  // A listen stream holds its slot until its response ends.
  if (held !== NO_HOLD) res.once("close", held);
  edge.routed({
    era: "modern",
    httpMethod: method,
    body: parsed,
    sessionId: undefined,
    owner: caller,
  });
  await edge.modern.handle(req, res, {
    owner: caller,
    body,
    route,
    ...(authInfo !== undefined && { authInfo }),
  });
}

async function serveLegacy(
  edge: Edge,
  req: IncomingMessage,
  res: ServerResponse,
  body: JsonBody,
  caller: Owner,
  authInfo: AuthInfo | undefined,
): Promise<void> {
  const legacy = edge.legacy;
  const method = req.method ?? "GET";
  if (legacy === undefined) {
    const r = edge.eraNotServed(method, body.kind === "invalid");
    edge.refused(r, method);
    return writeRefusal(res, r);
  }
  const parsed = body.kind === "json" ? body.value : undefined;
  const sessionId = single(req.headers["mcp-session-id"]);
  const hold = edge.holdLegacy(caller, method, parsed, sessionId);
  if ("status" in hold) {
    edge.refused(hold, method);
    return writeRefusal(res, hold);
  }
  // `tasks/result` waits are held until their response ends.
  if (hold.waits !== NO_HOLD) res.once("close", hold.waits);
  edge.routed({ era: "legacy", httpMethod: method, body: parsed, sessionId, owner: caller });
  if (parsed !== undefined && hold.session === undefined) {
    const answer = await legacy.answerDirect({
      headers: new NodeRequestHead(req).headers,
      owner: caller,
      parsedBody: parsed,
    });
    if (answer !== undefined) {
      res.writeHead(answer.status, answer.headers);
      res.end(answer.body);
      return;
    }
  }
  const request = webRequestFor(req, res, body.kind === "invalid" ? body.text : undefined);
  edge.owners.set(request, caller);
  let response: Response | undefined;
  try {
    response = await legacy.fetch(request, {
      ...(parsed !== undefined && { parsedBody: parsed }),
      ...(authInfo !== undefined && { authInfo }),
    });
  } finally {
    edge.sessionAnswered(hold, response);
  }
  reportSession(edge, sessionId, parsed, response);
  await writeWebResponse(res, response);
}

/**
 * Tells `onLegacySession` about a session opened by `initialize` (its end, however it comes,
 * is told by the legacy handler's `onSessionClosed`).
 */
export function reportSession(
  edge: Edge,
  sessionId: string | undefined,
  parsed: unknown,
  response: Response,
): void {
  const onSession = edge.options.onLegacySession;
  if (onSession === undefined) return;
  const created = response.headers.get("mcp-session-id");
  if (sessionId === undefined && created !== null && response.ok) {
    onSession({ kind: "opened", sessionId: created, clientName: initializeClientName(parsed) });
  }
}

/** The node answer for a failure inside the endpoint: never a stack trace on the wire. */
export function answerInternalError(res: ServerResponse): void {
  if (!res.headersSent) writeRefusal(res, refusal("internal-error"));
  else res.end();
}
