import type { IncomingMessage, ServerResponse } from "node:http";
import {
  ANONYMOUS,
  isAnonymous,
  type Owner,
  startJanitor,
  TaskRunner,
  TaskService,
  type TaskStore,
} from "@mcp-tasks/core";
import {
  createNodeTasksHandler,
  discardBody,
  type JsonBody,
  readJsonBody,
  TasksExtension,
  type TasksTool,
  TOO_DEEP_ANSWER,
  webRequestFor,
  writeJson,
  writeWebResponse,
} from "@mcp-tasks/extension";
import {
  isJsonContentType,
  localhostAllowedHostnames,
  localhostAllowedOrigins,
  validateHostHeader,
  validateOriginHeader,
} from "@modelcontextprotocol/server";
import type { OwnerResolver } from "./auth/resolver.js";
import {
  type LegacyEndpoint,
  type LegacyFactory,
  unavailableLegacyEndpoint,
} from "./legacy-seam.js";
import { clientLabel, DemoMetrics, storeLabelOf } from "./metrics.js";
import { demoTools } from "./tools/index.js";

/** Settings of {@link createDemoApp}. */
export interface DemoAppOptions {
  readonly store: TaskStore;
  /** The `store` label of the store metrics (`memory`, `pglite`, `postgres`); default by class. */
  readonly storeLabel?: string;
  /** Who is calling; resolved once per HTTP request. */
  readonly resolver: OwnerResolver;
  /** Answer anonymous callers `401` (and keep unowned tasks invisible). */
  readonly requireAuth?: boolean;
  /** The 2025-11-25 leg: a factory (see `legacy-seam.ts`), or `"off"`; default off. */
  readonly legacy?: LegacyFactory | "off" | undefined;
  /** Tools served; default the demo tools. */
  readonly tools?: readonly TasksTool[];
  /** Largest request body in bytes; default 1 MiB. */
  readonly maxBodyBytes?: number;
  /** Validate Host/Origin as a loopback server (DNS-rebinding protection); default true. */
  readonly loopbackOnly?: boolean;
  /** Suggested polling interval for new tasks; default 500 ms. */
  readonly pollIntervalMs?: number;
  /**
   * Queue stores: this node's lease on the tasks it runs. `holder` must be unique per
   * process; a task whose node stops renewing is re-run elsewhere or failed as orphaned.
   */
  readonly lease?: { readonly holder: string; readonly durationMs?: number };
  /**
   * What this node does (queue stores): `all` serves MCP and runs tasks, `http` serves MCP
   * and claims no task, `worker` runs tasks and answers MCP requests `404`. Default `all`.
   */
  readonly role?: "all" | "http" | "worker";
  /** Most task handlers running at once on this node; default 16 per CPU core. */
  readonly concurrency?: number;
  /**
   * Run the core janitor (`cleanupExpired`, `recoverOrphans`) this often (one pass at a time);
   * default off (0). The demo binary turns it on for pglite and postgres.
   */
  readonly sweepIntervalMs?: number;
  /** Told about errors no client can receive (sweeps, legacy sessions); default `console.error`. */
  readonly onError?: (error: unknown) => void;
}

/** The composed server: one `node:http` handler for the whole `/mcp` endpoint. */
export interface DemoApp {
  /**
   * Serves one `/mcp` request: method, Host and Origin checks, owner resolution, then the
   * body read once and routed by era. Resolves once the response is written (or opened).
   */
  handle(req: IncomingMessage, res: ServerResponse): Promise<void>;
  readonly service: TaskService;
  readonly runner: TaskRunner;
  readonly extension: TasksExtension;
  /** Which eras are served, for the start-up line. */
  readonly eras: readonly string[];
  /** The Prometheus metrics (own registry) and the traffic snapshot for a console. */
  readonly metrics: DemoMetrics;
  /** `/metrics` in the Prometheus text format. */
  metricsText(): Promise<string>;
  /** Closes the 2025-11-25 sessions (ending their streams); part of {@link close}. */
  closeSessions(): Promise<void>;
  /** What this node does. */
  readonly role: "all" | "http" | "worker";
  /**
   * Stops the janitor and the modern leg, closes legacy sessions, stops claiming, gives
   * running tasks `drainMs` to finish, then hands the rest back to the queue (another node
   * runs them at once, the attempt not counted) or, without a queue store, cancels them.
   * Closes the store last.
   */
  close(options?: { drainMs?: number }): Promise<void>;
}

/** A Host header's grammar (RFC 9110 `uri-host [ ":" port ]`, reg-name or IP literal). */
const HOST_HEADER = /^(?:[A-Za-z0-9._~-]+|\[[0-9A-Fa-f:.]+\])(?::[0-9]{1,5})?$/;
const SERVER_INFO = { name: "mcp-tasks-demo", version: "0.1.0" };
/** The HTTP methods of the MCP endpoint; anything else is `405` with `Allow`. */
const ALLOWED_METHODS = new Set(["GET", "POST", "DELETE"]);
const ALLOW = "GET, POST, DELETE";
const AUTH_CHALLENGE = { "WWW-Authenticate": 'Bearer realm="mcp-tasks-demo"' };

function jsonRpcError(
  res: ServerResponse,
  status: number,
  code: number,
  message: string,
  headers?: Record<string, string>,
): void {
  writeJson(res, status, { jsonrpc: "2.0", id: null, error: { code, message } }, headers);
}

/**
 * The head of a node request as the web `Request` fields owner resolvers read (`headers`,
 * `method`, `url`), without copying the headers or building a `Request`. One small object
 * per request (a class rather than closures); it is its own `headers` (`get`/`has` over the
 * node request's already lower-cased headers).
 */
class RequestHead {
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

function requestHead(req: IncomingMessage): Pick<Request, "headers" | "method" | "url"> {
  return new RequestHead(req) as unknown as Pick<Request, "headers" | "method" | "url">;
}

function single(value: string | string[] | undefined): string | undefined {
  return typeof value === "string" ? value : undefined;
}

function record(value: unknown): Record<string, unknown> | undefined {
  return typeof value === "object" && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}

/** `params._meta["io.modelcontextprotocol/clientInfo"].name` of a 2026-07-28 request. */
function modernClientName(body: unknown): string {
  const meta = record(record(record(body)?.params)?._meta);
  return clientLabel(record(meta?.["io.modelcontextprotocol/clientInfo"])?.name);
}

/** `params.clientInfo.name` when the body is a 2025-11-25 `initialize` request. */
function initializeClientName(body: unknown): string | undefined {
  const message = record(body);
  if (message?.method !== "initialize") return undefined;
  return clientLabel(record(record(message.params)?.clientInfo)?.name);
}

/**
 * Builds the demo endpoint: method, Host and Origin checks, owner resolution, the body read
 * once, then per-request era routing on the parsed body (the SDK's `classifyInboundRequest`,
 * what `isLegacyRequest` runs) — modern requests to `createNodeTasksHandler` of
 * `@mcp-tasks/extension` (polling answered straight from the extension, the rest by
 * `@modelcontextprotocol/server`), legacy requests to the pluggable legacy endpoint.
 */
export function createDemoApp(options: DemoAppOptions): DemoApp {
  const maxBodyBytes = options.maxBodyBytes ?? 1024 * 1024;
  const requireAuth = options.requireAuth ?? false;
  const metrics = new DemoMetrics({
    storeLabel: options.storeLabel ?? storeLabelOf(options.store),
  });
  const service = new TaskService({
    store: metrics.instrumentStore(options.store),
    requireOwner: requireAuth,
    pollIntervalMs: options.pollIntervalMs ?? 500,
  });
  const onError =
    options.onError ??
    ((error: unknown) => console.error("error:", (error as Error)?.message ?? error));
  const role = options.role ?? "all";
  const tools = options.tools ?? demoTools();
  const runner = new TaskRunner({
    service,
    tools,
    claim: role !== "http",
    ...(options.concurrency !== undefined && { concurrency: options.concurrency }),
    ...(options.lease && {
      lease: {
        holder: options.lease.holder,
        ...(options.lease.durationMs !== undefined && { durationMs: options.lease.durationMs }),
      },
    }),
  });
  const extension = new TasksExtension({ service, runner, tools, onError });
  const modern = createNodeTasksHandler(extension, {
    serverInfo: SERVER_INFO,
    maxBodyBytes,
    onError,
  });
  const owners = new WeakMap<Request, Owner>();
  const legacy: LegacyEndpoint =
    options.legacy === undefined || options.legacy === "off"
      ? unavailableLegacyEndpoint(
          options.legacy === "off" ? "--legacy off" : "no legacy facade is plugged in",
        )
      : options.legacy({
          service,
          runner,
          tools,
          ownerOf: (request) => owners.get(request) ?? ANONYMOUS,
          serverInfo: SERVER_INFO,
          onError,
        });
  metrics.attach({
    service,
    runner,
    toolNames: tools.map((tool) => tool.name),
    legacySessions: () => legacy.sessionCount,
  });
  const eras =
    options.legacy === undefined || options.legacy === "off"
      ? ["2026-07-28"]
      : ["2026-07-28", "2025-11-25"];
  const loopbackOnly = options.loopbackOnly ?? true;
  const hosts = localhostAllowedHostnames();
  const origins = localhostAllowedOrigins();

  // Clients send the same few Host values: remember the accepted ones (bounded).
  const acceptedHosts = new Set<string>();
  /**
   * Why the request's Host is refused, or undefined when it is fine: `400` for a Host header
   * that forms no URL, `403` for a foreign host on loopback.
   */
  function hostRefusal(req: IncomingMessage): { status: 400 | 403; message: string } | undefined {
    const host = req.headers.host;
    if (host !== undefined && acceptedHosts.has(host)) return undefined;
    // `new URL` accepts more than a Host header may hold (user info, a path): only
    // `name[:port]` and `[ipv6][:port]` go on to the SDK's check.
    const checked =
      host !== undefined && !HOST_HEADER.test(host)
        ? ({ ok: false, errorCode: "invalid_host_header", message: "Invalid Host header" } as const)
        : validateHostHeader(host, loopbackOnly ? hosts : []);
    // Not bound to loopback, any host that forms a URL is fine (an empty allow-list).
    const accepted = checked.ok || (!loopbackOnly && checked.errorCode === "invalid_host");
    if (accepted && host !== undefined && acceptedHosts.size < 64) acceptedHosts.add(host);
    if (accepted) return undefined;
    const status = checked.errorCode === "invalid_host" ? 403 : 400;
    onError(new Error(`rejected ${req.method} /mcp: ${checked.message} (HTTP ${status})`));
    return { status, message: checked.message };
  }

  async function serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (!ALLOWED_METHODS.has(req.method ?? "")) {
      await discardBody(req);
      res.writeHead(405, { Allow: ALLOW, "Content-Type": "application/json" });
      res.end(
        JSON.stringify({
          jsonrpc: "2.0",
          id: null,
          error: { code: -32000, message: `Method not allowed: use ${ALLOW}` },
        }),
      );
      return;
    }
    const refusal = hostRefusal(req);
    if (refusal !== undefined) {
      await discardBody(req);
      return jsonRpcError(res, refusal.status, -32000, refusal.message);
    }
    if (role === "worker") {
      await discardBody(req);
      return jsonRpcError(res, 404, -32601, "This node is a worker: it serves no MCP requests");
    }
    if (loopbackOnly) {
      const origin = validateOriginHeader(single(req.headers.origin), origins);
      if (!origin.ok) {
        await discardBody(req);
        return jsonRpcError(res, 403, -32000, origin.message);
      }
    }
    // Resolvers read the request's head (headers, method, url); no web Request is built.
    const resolution = await options.resolver.resolve(requestHead(req) as Request);
    if (resolution.kind === "reject") {
      await discardBody(req);
      return jsonRpcError(res, resolution.status, -32001, resolution.message, AUTH_CHALLENGE);
    }
    const caller = resolution.kind === "owner" ? resolution.owner : ANONYMOUS;
    if (requireAuth && isAnonymous(caller)) {
      await discardBody(req);
      return jsonRpcError(res, 401, -32001, "Authentication required", AUTH_CHALLENGE);
    }
    let body: JsonBody = { kind: "empty" };
    if (req.method === "POST") {
      if (!isJsonContentType(single(req.headers["content-type"]) ?? null)) {
        await discardBody(req);
        return jsonRpcError(res, 415, -32600, "Unsupported Media Type: use application/json");
      }
      body = await readJsonBody(req, maxBodyBytes);
      if (body.kind === "too-deep") return writeJson(res, 400, TOO_DEEP_ANSWER);
      if (body.kind === "too-large") {
        return jsonRpcError(res, 413, -32600, "Request body too large", { Connection: "close" });
      }
    }
    // The era, decided as `isLegacyRequest` decides it but from the parsed body: GET, DELETE
    // and bodies that are not JSON go to the legacy leg (which answers -32700 for the latter).
    const route =
      req.method === "POST" && body.kind === "json"
        ? modern.classify(req.headers, body.value)
        : undefined;
    if (route === undefined || route.kind === "legacy") {
      return serveLegacy(req, res, body, caller);
    }
    metrics.count("2026-07-28", modernClientName(body.kind === "json" ? body.value : undefined));
    await modern.handle(req, res, { owner: caller, body, route });
  }

  async function serveLegacy(
    req: IncomingMessage,
    res: ServerResponse,
    body: JsonBody,
    caller: Owner,
  ): Promise<void> {
    const parsed = body.kind === "json" ? body.value : undefined;
    const sessionId = single(req.headers["mcp-session-id"]) ?? null;
    const initialize = initializeClientName(parsed);
    metrics.count("2025-11-25", initialize ?? metrics.sessionClient(sessionId));
    if (parsed !== undefined && legacy.answerDirect !== undefined) {
      const answer = await legacy.answerDirect({
        headers: requestHead(req).headers,
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
    owners.set(request, caller);
    const response = await legacy.fetch(
      request,
      parsed === undefined ? undefined : { parsedBody: parsed },
    );
    const created = response.headers.get("mcp-session-id");
    if (initialize !== undefined && created !== null && response.ok) {
      metrics.bindSession(created, initialize);
    }
    if (req.method === "DELETE" && sessionId !== null) metrics.endSession(sessionId);
    await writeWebResponse(res, response);
  }

  const sweepEvery = options.sweepIntervalMs ?? 0;
  const stopJanitor =
    sweepEvery > 0
      ? startJanitor(service, {
          intervalMs: sweepEvery,
          batch: 500,
          onSweep: (sweep) => {
            if (sweep.error !== undefined) onError(sweep.error);
          },
        })
      : async () => {};

  let sessionsClosed: Promise<void> | undefined;
  const closeSessions = () => {
    sessionsClosed ??= (legacy.close?.() ?? Promise.resolve()).catch(onError);
    return sessionsClosed;
  };

  return {
    service,
    runner,
    extension,
    eras,
    metrics,
    metricsText: () => metrics.render(),
    closeSessions,
    async handle(req, res) {
      try {
        await serve(req, res);
      } catch (error) {
        onError(error);
        // Never a stack trace on the wire.
        if (!res.headersSent) jsonRpcError(res, 500, -32603, "Internal error");
        else res.end();
      }
    },
    role,
    async close({ drainMs = 10_000 } = {}) {
      await stopJanitor();
      await modern.close();
      await closeSessions();
      // Stop claiming, let running tasks finish within the drain time, then hand the rest
      // back to the queue (another node claims them at once) or, in memory, cancel them.
      await runner.shutdown({ drainMs });
      await options.store.close();
    },
  };
}
