import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from "node:http";
import type { Owner } from "@mcp-tasks/core";
import { ANONYMOUS } from "@mcp-tasks/core";
import type { TasksServerFactory } from "@mcp-tasks/mcp-server";
import {
  type AuthInfo,
  type Implementation,
  type InboundClassificationOutcome,
  isJsonContentType,
  SERVER_INFO_META_KEY,
} from "@modelcontextprotocol/server";
import type { TasksExtension } from "../extension.js";
import { discardBody, type JsonBody, readJsonBody } from "./body.js";
import { RequestClassifier } from "./classify.js";
import { createDirectAnswers } from "./direct-answers.js";
import { matchDirectTasksRequest } from "./direct-route.js";
import { matchDirectToolCall } from "./direct-tool-call.js";
import { serveTaskListen } from "./listen-route.js";
import { TOO_DEEP_ANSWER, writeInternalError, writeTooLarge } from "./refusals.js";
import { createSdkFallback } from "./sdk-fallback.js";
import { writeJson } from "./web-bridge.js";

/** Settings of {@link createNodeTasksHandler}. */
export interface NodeTasksHandlerOptions {
  /** Server name and version (`server/discover`, `_meta` of results); default `mcp-tasks`. */
  readonly serverInfo?: Implementation;
  /** Instructions shown to the client in `server/discover`. */
  readonly instructions?: string;
  /** Largest request body in bytes; default 1 MiB. Larger bodies get `413`. */
  readonly maxBodyBytes?: number;
  /** SSE comment keepalive interval of task listen streams; default 15 000 ms, 0 disables. */
  readonly keepAliveMs?: number;
  /** Told about failures no client can receive; default ignore. */
  readonly onError?: (error: unknown) => void;
  /**
   * Your own server, built per request (called with `{ era: "modern" }`): the extension is
   * attached to it with {@link bindTasksExtension} before it serves the request, so an
   * `McpServer` keeps its tools, prompts and resources next to the task tools. Without it
   * each request is served by a bare server with the extension's tools only.
   */
  readonly server?: TasksServerFactory;
}

/** Per-request input of {@link NodeTasksHandler.handle}. */
export interface NodeTasksRequestOptions {
  /** The caller, resolved by the host; every store call of this request is made as it. */
  readonly owner?: Owner;
  /**
   * The body, when the host already read it with {@link readJsonBody} (e.g. to route by era).
   * Without it the handler reads it, once.
   */
  readonly body?: JsonBody;
  /** Passed on to SDK handlers as `ctx.authInfo` (the owner is added to `extra`). */
  readonly authInfo?: AuthInfo;
  /**
   * The SDK's `classifyInboundRequest` outcome for this request and `body`, when the host
   * already ran it (e.g. to route by era), so it is not run twice.
   */
  readonly route?: InboundClassificationOutcome;
}

/** A `node:http` handler for the 2026-07-28 tasks extension; see {@link createNodeTasksHandler}. */
export interface NodeTasksHandler {
  /** Serves one request and resolves once the response is written (streams: once opened). */
  handle(
    req: IncomingMessage,
    res: ServerResponse,
    options?: NodeTasksRequestOptions,
  ): Promise<void>;
  /**
   * `classifyInboundRequest` of `@modelcontextprotocol/server` for a POST body parsed with
   * {@link readJsonBody}: the same outcome, with the envelope checks of plain 2026-07-28
   * requests remembered per distinct `_meta` (the SDK's zod validation is otherwise the
   * largest cost of a poll). Pass the outcome to {@link NodeTasksHandler.handle} as `route`.
   */
  classify(headers: IncomingHttpHeaders, body: unknown): InboundClassificationOutcome;
  /** Ends open SDK exchanges and listen streams of the SDK's router. */
  close(): Promise<void>;
}

const DEFAULT_MAX_BODY_BYTES = 1024 * 1024;

/**
 * The 2026-07-28 tasks extension as a `node:http` request handler: the lean path for the
 * requests a tasks server sees most (every client polls).
 *
 * Each body is read and parsed once (bounded by `maxBodyBytes`). A plain JSON POST of
 * `tasks/get`, `tasks/update` or `tasks/cancel` — the 2026-07-28 envelope, `MCP-Protocol-Version`
 * and `Mcp-Method` agreeing with the body, `Mcp-Name` equal to `params.taskId` — is answered
 * straight from the {@link TasksExtension} handlers with one JSON write, exactly as the SDK
 * would answer it. So is a `tools/call` that becomes a task (a tool of the extension with no
 * preflight, valid arguments, the extension declared where the tool needs it; `Mcp-Name`
 * equal to `params.name`), unless a `server` factory is set: a user's server may answer a
 * call its own way, so then every call goes through it. A `subscriptions/listen` for task
 * ids is streamed as Server-Sent Events. Everything else (discovery, `tools/list`, calls
 * answered in the request or refused, every malformed or mismatched request) goes to
 * `createMcpHandler` of `@modelcontextprotocol/server` with the already-parsed body, so its
 * checks and error answers are unchanged. 2025-11-25 requests are rejected as by
 * `legacy: "reject"`: route them elsewhere first (e.g. with `classifyInboundRequest`).
 */
export function createNodeTasksHandler(
  extension: TasksExtension,
  options: NodeTasksHandlerOptions = {},
): NodeTasksHandler {
  const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  const keepAliveMs = options.keepAliveMs ?? 15_000;
  const serverInfo = options.serverInfo ?? { name: "mcp-tasks", version: "0.1.0" };
  const onError = options.onError ?? (() => {});
  const classifier = new RequestClassifier();
  const userServer = options.server;
  const sdk = createSdkFallback(extension, {
    serverInfo,
    maxBodyBytes,
    ...(options.instructions !== undefined && { instructions: options.instructions }),
    ...(userServer !== undefined && { server: userServer }),
  });
  const answer = createDirectAnswers(extension, { [SERVER_INFO_META_KEY]: serverInfo });

  return {
    async handle(req, res, requestOptions = {}) {
      const owner = requestOptions.owner ?? ANONYMOUS;
      try {
        const isPost = req.method === "POST";
        if (isPost && !isJsonContentType(req.headers["content-type"] ?? null)) {
          // The SDK answers 415 without reading the body; drained first, so that the
          // client hears it.
          await discardBody(req);
          await sdk.serve(req, res, owner, { kind: "empty" }, requestOptions.authInfo);
          return;
        }
        const body =
          requestOptions.body ??
          (isPost ? await readJsonBody(req, maxBodyBytes) : { kind: "empty" });
        if (body.kind === "too-deep") {
          writeJson(res, 400, TOO_DEEP_ANSWER);
          return;
        }
        if (body.kind === "too-large") {
          writeTooLarge(res, maxBodyBytes);
          return;
        }
        if (isPost && body.kind === "json") {
          const route = requestOptions.route ?? classifier.classify(req.headers, body.value);
          const direct = matchDirectTasksRequest(req.headers, body.value, route);
          if (direct !== undefined) return await answer.tasksRequest(direct, owner, req, res);
          // Only on the built-in server: a user's server may answer a call differently.
          if (userServer === undefined) {
            const call = matchDirectToolCall(req.headers, body.value, route, extension.tools);
            if (call !== undefined) return await answer.toolCall(call, owner, req, res);
          }
          if (await serveTaskListen(extension, keepAliveMs, req, res, owner, body.value)) return;
        }
        await sdk.serve(req, res, owner, body, requestOptions.authInfo);
      } catch (error) {
        onError(error);
        writeInternalError(res);
      }
    },
    classify: (headers, body) => classifier.classify(headers, body),
    close: () => sdk.close(),
  };
}
