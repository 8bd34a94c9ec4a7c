import type { IncomingMessage, ServerResponse } from "node:http";
import type { TasksExtension } from "@mcp-tasks/extension";
import { Edge } from "./edge.js";
import { type FetchRequestExtra, serveFetch } from "./fetch-front.js";
import { answerInternalError, type NodeRequestExtra, serveNode } from "./node-front.js";
import type { TasksEndpointOptions } from "./options.js";
import { type Refusal, refusal, refusalResponse } from "./refusals.js";

/** One MCP endpoint serving both eras; see {@link createTasksEndpoint}. */
export interface TasksEndpoint {
  /**
   * Serves one `node:http` request (also an Express `req`/`res`) and resolves once the
   * response is written or its stream opened. Never rejects: a failure is answered `500`
   * (and told to `onError`).
   */
  handle(req: IncomingMessage, res: ServerResponse, extra?: NodeRequestExtra): Promise<void>;
  /** {@link TasksEndpoint.handle} as a `node:http` request listener. */
  readonly listener: (req: IncomingMessage, res: ServerResponse) => void;
  /** Serves one web-standard request (`Request` → `Response`): Hono, Bun, Deno, workers. */
  fetch(request: Request, extra?: FetchRequestExtra): Promise<Response>;
  /** The 2026-07-28 handlers underneath (shared by both eras' task tools). */
  readonly extension: TasksExtension;
  /** The eras served, by protocol revision (for a start-up line). */
  readonly eras: readonly string[];
  /** 2025-11-25 sessions currently open. */
  readonly legacySessionCount: number;
  /**
   * This endpoint's `Host` and `Origin` checks alone, for the server's other paths on the
   * same origin (`/metrics`, `/health`): the refusal to answer (e.g. with `writeRefusal`),
   * or `undefined` when they pass.
   */
  checkHostAndOrigin(request: IncomingMessage | Request): Refusal | undefined;
  /** Closes the 2025-11-25 sessions (ending their GET streams); part of {@link close}. */
  closeSessions(): Promise<void>;
  /**
   * Stops serving (new requests get `503`), ends the SDK exchanges and listen streams, and
   * closes the sessions. The service, runner and store are the caller's to shut down.
   */
  close(): Promise<void>;
}

/**
 * One MCP endpoint for both protocol eras over one task service: what a server in front of
 * `@mcp-tasks/extension` and `@mcp-tasks/legacy` needs at its HTTP edge, in one place.
 *
 * Each request passes, in order: the method (`GET`, `POST`, `DELETE`), the `Host` header
 * (DNS-rebinding protection; loopback names by default), `Origin`, the owner resolution
 * (from the framework's `AuthInfo`, or `owner(request, authInfo)`), the content type, and
 * the body, read once within `maxBodyBytes` and `bodyTimeoutMs`. The parsed body then
 * decides the era, as `isLegacyRequest` does: 2026-07-28 requests go to
 * `createNodeTasksHandler` (`tasks/get` and the other polls answered without the SDK round
 * trip; task listen streams) or, for web requests, to the SDK's `createMcpHandler`;
 * 2025-11-25 requests to the sessions of `createLegacyHandler`. Every refusal on the way
 * comes from one table (`refusal`), so a fault gets the same answer in both eras.
 *
 * Mount it with `listener` / `createTasksHttpServer` (`node:http`), `tasksExpressHandler`
 * (`@mcp-tasks/http/express`), `tasksHonoHandler` (`@mcp-tasks/http/hono`), or `fetch`.
 */
export function createTasksEndpoint(options: TasksEndpointOptions): TasksEndpoint {
  const edge = new Edge(options);
  let sessionsClosed: Promise<void> | undefined;
  const closeSessions = () => {
    sessionsClosed ??= (edge.legacy?.close() ?? Promise.resolve()).catch(edge.onError);
    return sessionsClosed;
  };
  const handle = async (req: IncomingMessage, res: ServerResponse, extra = {}) => {
    try {
      await serveNode(edge, req, res, extra);
    } catch (error) {
      edge.onError(error);
      answerInternalError(res);
    }
  };
  return {
    handle,
    listener: (req, res) => void handle(req, res),
    async fetch(request, extra = {}) {
      try {
        return await serveFetch(edge, request, extra);
      } catch (error) {
        edge.onError(error);
        return refusalResponse(refusal("internal-error"));
      }
    },
    extension: edge.extension,
    eras: edge.legacy === undefined ? ["2026-07-28"] : ["2026-07-28", "2025-11-25"],
    get legacySessionCount() {
      return edge.legacy?.sessionCount ?? 0;
    },
    checkHostAndOrigin(request) {
      if (request instanceof Request) {
        let host = request.headers.get("host") ?? undefined;
        if (host === undefined && URL.canParse(request.url)) host = new URL(request.url).host;
        return edge.guards.checkHostAndOrigin(host, request.headers.get("origin") ?? undefined);
      }
      const origin = request.headers.origin;
      return edge.guards.checkHostAndOrigin(
        request.headers.host,
        typeof origin === "string" ? origin : undefined,
      );
    },
    closeSessions,
    async close() {
      edge.closed = true;
      await edge.modern.close();
      await edge.modernFetch.close();
      await closeSessions();
    },
  };
}
