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
  createTasksServer,
  handleTaskListenRequest,
  TasksExtension,
  type TasksTool,
} from "@mcp-tasks/extension";
import {
  type AuthInfo,
  createMcpHandler,
  hostHeaderValidationResponse,
  isJsonContentType,
  isLegacyRequest,
  localhostAllowedHostnames,
  localhostAllowedOrigins,
  originValidationResponse,
} from "@modelcontextprotocol/server";
import type { OwnerResolver } from "./auth/resolver.js";
import {
  type LegacyEndpoint,
  type LegacyFactory,
  unavailableLegacyEndpoint,
} from "./legacy-seam.js";
import { clientLabel, RequestMetrics } from "./metrics.js";
import { demoTools } from "./tools/index.js";

/** Settings of {@link createDemoApp}. */
export interface DemoAppOptions {
  readonly store: TaskStore;
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

/** The composed server: one web-standard `fetch` for the whole `/mcp` endpoint. */
export interface DemoApp {
  fetch(request: Request): Promise<Response>;
  readonly service: TaskService;
  readonly runner: TaskRunner;
  readonly extension: TasksExtension;
  /** Which eras are served, for the start-up line. */
  readonly eras: readonly string[];
  /** Request counters per era and client name. */
  readonly metrics: RequestMetrics;
  /** `/metrics` in the Prometheus text format. */
  metricsText(): string;
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

const SERVER_INFO = { name: "mcp-tasks-demo", version: "0.1.0" };
const OWNER_KEY = "mcp-tasks/owner";

function jsonRpcError(
  status: number,
  code: number,
  message: string,
  headers?: Record<string, string>,
) {
  return Response.json(
    { jsonrpc: "2.0", id: null, error: { code, message } },
    { status, headers: headers ?? {} },
  );
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

function ownerFromAuthInfo(authInfo: AuthInfo | undefined): Owner {
  const value = authInfo?.extra?.[OWNER_KEY];
  return value && typeof value === "object" ? (value as Owner) : ANONYMOUS;
}

/**
 * Builds the demo endpoint: owner resolution, then `subscriptions/listen` for task ids,
 * then per-request era routing with `isLegacyRequest` — modern requests to
 * `createMcpHandler(factory, { legacy: "reject" })` serving the tasks extension, legacy
 * requests to the pluggable legacy endpoint.
 */
export function createDemoApp(options: DemoAppOptions): DemoApp {
  const maxBodyBytes = options.maxBodyBytes ?? 1024 * 1024;
  const requireAuth = options.requireAuth ?? false;
  const service = new TaskService({
    store: options.store,
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
  const metrics = new RequestMetrics();
  const extension = new TasksExtension({ service, runner, tools });
  const modern = createMcpHandler(
    (ctx) =>
      createTasksServer(extension, {
        owner: ownerFromAuthInfo(ctx.authInfo),
        serverInfo: SERVER_INFO,
      }),
    { legacy: "reject", maxRequestBodySize: maxBodyBytes, onerror: () => {} },
  );
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
  const eras =
    options.legacy === undefined || options.legacy === "off"
      ? ["2026-07-28"]
      : ["2026-07-28", "2025-11-25"];
  const loopbackOnly = options.loopbackOnly ?? true;
  const hosts = localhostAllowedHostnames();
  const origins = localhostAllowedOrigins();

  async function serve(request: Request): Promise<Response> {
    if (role === "worker") {
      return jsonRpcError(404, -32601, "This node is a worker: it serves no MCP requests");
    }
    if (loopbackOnly) {
      const rejected =
        hostHeaderValidationResponse(request, hosts) ?? originValidationResponse(request, origins);
      if (rejected) return rejected;
    }
    const resolution = await options.resolver.resolve(request);
    if (resolution.kind === "reject") {
      return jsonRpcError(resolution.status, -32001, resolution.message, {
        "WWW-Authenticate": 'Bearer realm="mcp-tasks-demo"',
      });
    }
    const caller = resolution.kind === "owner" ? resolution.owner : ANONYMOUS;
    if (requireAuth && isAnonymous(caller)) {
      return jsonRpcError(401, -32001, "Authentication required", {
        "WWW-Authenticate": 'Bearer realm="mcp-tasks-demo"',
      });
    }
    if (request.method === "POST") {
      if (!isJsonContentType(request.headers.get("content-type"))) {
        return jsonRpcError(415, -32600, "Unsupported Media Type: use application/json");
      }
      const length = Number(request.headers.get("content-length") ?? "0");
      if (length > maxBodyBytes) return jsonRpcError(413, -32600, "Request body too large");
    }
    let parsed: unknown;
    if (request.method === "POST") {
      try {
        parsed = JSON.parse(await request.clone().text());
      } catch {
        parsed = undefined; // routed as legacy, which answers -32700
      }
    }
    const routeOptions = { maxRequestBodySize: maxBodyBytes };
    if (await isLegacyRequest(request, parsed, routeOptions)) {
      return serveLegacy(request, parsed, caller);
    }
    metrics.count("2026-07-28", modernClientName(parsed));
    const listen = await handleTaskListenRequest(request, extension, caller);
    if (listen) return listen;
    const authInfo: AuthInfo = {
      token: "",
      clientId: caller.principalId ?? "anonymous",
      scopes: [],
      extra: { [OWNER_KEY]: caller },
    };
    return modern.fetch(request, { authInfo });
  }

  async function serveLegacy(request: Request, parsed: unknown, caller: Owner) {
    const sessionId = request.headers.get("mcp-session-id");
    const initialize = initializeClientName(parsed);
    metrics.count("2025-11-25", initialize ?? metrics.sessionClient(sessionId));
    owners.set(request, caller);
    const response = await legacy.fetch(
      request,
      parsed === undefined ? undefined : { parsedBody: parsed },
    );
    const created = response.headers.get("mcp-session-id");
    if (initialize !== undefined && created !== null && response.ok) {
      metrics.bindSession(created, initialize);
    }
    if (request.method === "DELETE" && sessionId !== null) metrics.endSession(sessionId);
    return response;
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
    metricsText: () =>
      metrics.render({
        runner: runner.stats,
        ...(typeof legacy.sessionCount === "number" && { legacySessions: legacy.sessionCount }),
      }),
    closeSessions,
    async fetch(request) {
      try {
        return await serve(request);
      } catch {
        // Never a stack trace on the wire.
        return jsonRpcError(500, -32603, "Internal error");
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
