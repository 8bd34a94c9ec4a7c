import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from "node:http";
import type { Owner } from "@mcp-tasks/core";
import { ANONYMOUS, extractTraceContext, isRpcError, type RpcOutcome } from "@mcp-tasks/core";
import type { TasksServerFactory } from "@mcp-tasks/mcp-server";
import {
  type AuthInfo,
  createMcpHandler,
  type Implementation,
  type InboundClassificationOutcome,
  isJsonContentType,
  SERVER_INFO_META_KEY,
} from "@modelcontextprotocol/server";
import { bindTasksExtension } from "../binding.js";
import { RPC_ERROR } from "../errors.js";
import type { TasksExtension } from "../extension.js";
import { answerTaskListen, matchTaskListen, SSE_HEADERS } from "../listen-stream.js";
import type { TasksRequestContext } from "../request.js";
import { discardBody, type JsonBody, readJsonBody } from "./body.js";
import { RequestClassifier } from "./classify.js";
import { type DirectTasksRequest, matchDirectTasksRequest } from "./direct-route.js";
import { type DirectToolCall, matchDirectToolCall } from "./direct-tool-call.js";
import { MAX_JSON_DEPTH } from "./json-depth.js";
import { createQuietTasksServer } from "./quiet-server.js";
import { webRequestFor, writeJson, writeWebResponse } from "./web-bridge.js";

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

const OWNER_KEY = "io.github.mcp-tasks/owner";
/** The answer to a body nested deeper than `MAX_JSON_DEPTH`, in either era. */
export const TOO_DEEP_ANSWER = Object.freeze({
  jsonrpc: "2.0",
  id: null,
  error: Object.freeze({
    code: -32600,
    message: `Invalid Request: JSON nested deeper than ${MAX_JSON_DEPTH} levels`,
  }),
});
const DEFAULT_MAX_BODY_BYTES = 1024 * 1024;

function ownerOf(authInfo: AuthInfo | undefined): Owner {
  const value = authInfo?.extra?.[OWNER_KEY];
  return value && typeof value === "object" ? (value as Owner) : ANONYMOUS;
}

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
  const resultMeta = { [SERVER_INFO_META_KEY]: serverInfo };
  const classifier = new RequestClassifier();
  const userServer = options.server;
  const sdk = createMcpHandler(
    async (ctx) => {
      if (userServer === undefined) {
        return createQuietTasksServer(extension, {
          owner: ownerOf(ctx.authInfo),
          serverInfo,
          ...(options.instructions !== undefined && { instructions: options.instructions }),
        });
      }
      const server = await userServer({ era: "modern" });
      bindTasksExtension(server, extension, ownerOf(ctx.authInfo));
      return server;
    },
    { legacy: "reject", maxRequestBodySize: maxBodyBytes, onerror: () => {} },
  );

  /** The handlers' context for a request taken directly, as the SDK binding builds it. */
  function directContext(
    owner: Owner,
    req: IncomingMessage,
    direct: { params: Record<string, unknown>; clientCapabilities: unknown },
    routingName: string,
  ): TasksRequestContext {
    // As the SDK binding finds it: `_meta.traceparent`, else the W3C headers.
    const traceparent = req.headers.traceparent;
    const traceContext =
      extractTraceContext(direct.params._meta) ??
      (typeof traceparent === "string"
        ? extractTraceContext({ traceparent, tracestate: req.headers.tracestate })
        : null);
    return {
      owner,
      clientCapabilities: direct.clientCapabilities,
      routingName,
      ...(traceContext !== null && { traceContext }),
    };
  }

  /** An error outcome as the SDK answers it: in band, `400` only for `-32021`. */
  function writeRpcError(
    res: ServerResponse,
    id: string | number,
    error: { code: number; message: string; data?: unknown },
  ): void {
    const status = error.code === RPC_ERROR.MISSING_REQUIRED_CLIENT_CAPABILITY ? 400 : 200;
    writeJson(res, status, { jsonrpc: "2.0", id, error });
  }

  async function answerDirect(
    direct: DirectTasksRequest,
    owner: Owner,
    req: IncomingMessage,
    res: ServerResponse,
  ): Promise<void> {
    const ctx = directContext(owner, req, direct, direct.taskId);
    let outcome: RpcOutcome<Record<string, unknown>>;
    switch (direct.method) {
      case "tasks/get":
        outcome = await extension.getTask(ctx, direct.params);
        break;
      case "tasks/update":
        outcome = await extension.updateTask(ctx, direct.params);
        break;
      case "tasks/cancel":
        outcome = await extension.cancelTask(ctx, direct.params);
        break;
    }
    if (isRpcError(outcome)) return writeRpcError(res, direct.id, outcome.error);
    // The handlers return a fresh object: add the server's `_meta` in place (same key order
    // as a spread, one object less per answer).
    const result = outcome.result;
    const meta = result._meta;
    result._meta =
      typeof meta === "object" && meta !== null ? { ...meta, ...resultMeta } : resultMeta;
    writeJson(res, 200, { jsonrpc: "2.0", id: direct.id, result });
  }

  /**
   * A task-creating `tools/call` ({@link matchDirectToolCall}) answered from the extension's
   * handler, as the SDK would serialize it: the 2026 codec's `content: []` first, the
   * server's `_meta` last, `result` before `jsonrpc` and `id`.
   */
  async function answerToolCall(
    direct: DirectToolCall,
    owner: Owner,
    req: IncomingMessage,
    res: ServerResponse,
  ): Promise<void> {
    const ctx = directContext(owner, req, direct, direct.name);
    const outcome = await extension.callTool(ctx, direct.params);
    if (isRpcError(outcome)) return writeRpcError(res, direct.id, outcome.error);
    const created = outcome.result as Record<string, unknown>;
    const meta = created._meta;
    const result = {
      ...(created.content === undefined && { content: [] }),
      ...created,
      _meta: typeof meta === "object" && meta !== null ? { ...meta, ...resultMeta } : resultMeta,
    };
    writeJson(res, 200, { result, jsonrpc: "2.0", id: direct.id });
  }

  async function serveListen(
    req: IncomingMessage,
    res: ServerResponse,
    owner: Owner,
    body: unknown,
  ): Promise<boolean> {
    const message = matchTaskListen(body);
    if (message === null) return false;
    const answer = await answerTaskListen(extension, owner, message, keepAliveMs);
    if (answer.kind === "error") {
      writeJson(res, answer.status, answer.body);
      return true;
    }
    res.writeHead(200, SSE_HEADERS);
    res.flushHeaders();
    const gone = new AbortController();
    res.once("close", () => gone.abort());
    req.once("aborted", () => gone.abort());
    answer.start({ signal: gone.signal, write: (frame) => res.write(frame), end: () => res.end() });
    return true;
  }

  async function serveBySdk(
    req: IncomingMessage,
    res: ServerResponse,
    owner: Owner,
    body: JsonBody,
    authInfo: AuthInfo | undefined,
  ): Promise<void> {
    const request = webRequestFor(req, res, body.kind === "invalid" ? body.text : undefined);
    const response = await sdk.fetch(request, {
      authInfo: {
        token: authInfo?.token ?? "",
        clientId: authInfo?.clientId ?? owner.principalId ?? "anonymous",
        scopes: authInfo?.scopes ?? [],
        ...authInfo,
        extra: { ...authInfo?.extra, [OWNER_KEY]: owner },
      },
      ...(body.kind === "json" && { parsedBody: body.value }),
    });
    await writeWebResponse(res, response);
  }

  return {
    async handle(req, res, requestOptions = {}) {
      const owner = requestOptions.owner ?? ANONYMOUS;
      try {
        const isPost = req.method === "POST";
        if (isPost && !isJsonContentType(req.headers["content-type"] ?? null)) {
          // The SDK answers 415 without reading the body; drained first, so that the
          // client hears it.
          await discardBody(req);
          await serveBySdk(req, res, owner, { kind: "empty" }, requestOptions.authInfo);
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
          writeJson(
            res,
            413,
            {
              jsonrpc: "2.0",
              id: null,
              // The SDK's answer (`createMcpHandler`, its transports), word for word.
              error: {
                code: -32000,
                message: `Payload Too Large: Request body must not exceed ${maxBodyBytes} bytes`,
              },
            },
            { Connection: "close" },
          );
          return;
        }
        if (isPost && body.kind === "json") {
          const route = requestOptions.route ?? classifier.classify(req.headers, body.value);
          const direct = matchDirectTasksRequest(req.headers, body.value, route);
          if (direct !== undefined) return await answerDirect(direct, owner, req, res);
          // Only on the built-in server: a user's server may answer a call differently.
          if (userServer === undefined) {
            const call = matchDirectToolCall(req.headers, body.value, route, extension.tools);
            if (call !== undefined) return await answerToolCall(call, owner, req, res);
          }
          if (await serveListen(req, res, owner, body.value)) return;
        }
        await serveBySdk(req, res, owner, body, requestOptions.authInfo);
      } catch (error) {
        onError(error);
        if (!res.headersSent) {
          writeJson(res, 500, {
            jsonrpc: "2.0",
            id: null,
            error: { code: RPC_ERROR.INTERNAL_ERROR, message: "Internal error" },
          });
        } else res.end();
      }
    },
    classify: (headers, body) => classifier.classify(headers, body),
    close: () => sdk.close(),
  };
}
