import {
  ANONYMOUS,
  isAnonymous,
  type Owner,
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
}

/** The composed server: one web-standard `fetch` for the whole `/mcp` endpoint. */
export interface DemoApp {
  fetch(request: Request): Promise<Response>;
  readonly service: TaskService;
  readonly runner: TaskRunner;
  readonly extension: TasksExtension;
  /** Which eras are served, for the start-up line. */
  readonly eras: readonly string[];
  /** Stops the modern leg, closes legacy sessions, waits for running tasks, closes the store. */
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
  const runner = new TaskRunner({ service });
  const tools = options.tools ?? demoTools();
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
        });
  const eras =
    options.legacy === undefined || options.legacy === "off"
      ? ["2026-07-28"]
      : ["2026-07-28", "2025-11-25"];
  const loopbackOnly = options.loopbackOnly ?? true;
  const hosts = localhostAllowedHostnames();
  const origins = localhostAllowedOrigins();

  async function serve(request: Request): Promise<Response> {
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
    const listen = await handleTaskListenRequest(request, extension, caller);
    if (listen) return listen;
    if (await isLegacyRequest(request, undefined, { maxRequestBodySize: maxBodyBytes })) {
      owners.set(request, caller);
      return legacy.fetch(request);
    }
    const authInfo: AuthInfo = {
      token: "",
      clientId: caller.principalId ?? "anonymous",
      scopes: [],
      extra: { [OWNER_KEY]: caller },
    };
    return modern.fetch(request, { authInfo });
  }

  return {
    service,
    runner,
    extension,
    eras,
    async fetch(request) {
      try {
        return await serve(request);
      } catch {
        // Never a stack trace on the wire.
        return jsonRpcError(500, -32603, "Internal error");
      }
    },
    async close({ drainMs = 10_000 } = {}) {
      await modern.close();
      await legacy.close?.();
      const drained = runner.drain();
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<"timeout">((resolve) => {
        timer = setTimeout(() => resolve("timeout"), drainMs);
      });
      if ((await Promise.race([drained, timeout])) === "timeout") {
        runner.abortAll();
        await runner.drain();
      }
      clearTimeout(timer);
      await options.store.close();
    },
  };
}
