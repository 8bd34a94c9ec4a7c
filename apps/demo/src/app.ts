import type { IncomingMessage, ServerResponse } from "node:http";
import {
  OperatorView,
  startJanitor,
  TaskRunner,
  TaskService,
  type TaskStore,
} from "@mcp-tasks/core";
import { discardBody, type TasksExtension, type TasksTool, writeJson } from "@mcp-tasks/extension";
import { createTasksEndpoint, type OwnerLimitsOptions, type Refusal } from "@mcp-tasks/http";
import type { OwnerResolver } from "./auth/resolver.js";
import { metricsObservers } from "./edge-observers.js";
import { DemoMetrics, storeLabelOf } from "./metrics.js";
import { demoTools } from "./tools/index.js";

/** Settings of {@link createDemoApp}. */
export interface DemoAppOptions {
  readonly store: TaskStore;
  /** The `store` label of the store metrics (`memory`, `pglite`, `postgres`); default by class. */
  readonly storeLabel?: string;
  /** Who is calling; resolved once per HTTP request. */
  readonly resolver: OwnerResolver;
  /**
   * The require-owner posture: anonymous callers get `401` and unowned tasks are invisible
   * (the task service's `requireOwner`). Default true, since every demo resolver is an owner
   * hook; `false` lets anonymous callers in, who then share the unowned tasks.
   */
  readonly requireAuth?: boolean;
  /** Per-owner limits of the endpoint (`@mcp-tasks/http`'s defaults otherwise). */
  readonly limits?: OwnerLimitsOptions;
  /** Serve the 2025-11-25 era too (`true`); default off. */
  readonly legacy?: boolean | "off";
  /** Tools served; default the demo tools. */
  readonly tools?: readonly TasksTool[];
  /** Largest request body in bytes; default 1 MiB. */
  readonly maxBodyBytes?: number;
  /** Validate Host/Origin as a loopback server (DNS-rebinding protection); default true. */
  readonly loopbackOnly?: boolean;
  /** Suggested polling interval for new tasks; default 500 ms. */
  readonly pollIntervalMs?: number;
  /** Queue stores: this node's lease (`holder` unique per process) on the tasks it runs. */
  readonly lease?: { readonly holder: string; readonly durationMs?: number };
  /** `all` serves MCP and runs tasks, `http` claims no task, `worker` answers MCP `404`. */
  readonly role?: "all" | "http" | "worker";
  /** Most task handlers running at once on this node; default 16 per CPU core. */
  readonly concurrency?: number;
  /**
   * Most tasks one owner may have running at once across the cluster; default a quarter of
   * `concurrency` (at least 1), `Infinity` for no cap. See `TaskRunnerOptions`.
   */
  readonly maxRunningPerOwner?: number;
  /** Of one owner's tasks waiting for input, how many hold no worker; default `concurrency`. */
  readonly maxWaitingPerOwner?: number;
  /** Run the core janitor this often (one pass at a time); default off (0). */
  readonly sweepIntervalMs?: number;
  /** Told about errors no client can receive (sweeps, legacy sessions); default `console.error`. */
  readonly onError?: (error: unknown) => void;
}

/** The composed server: one `node:http` handler for the whole `/mcp` endpoint. */
export interface DemoApp {
  /** Serves one `/mcp` request (see `createTasksEndpoint` of `@mcp-tasks/http`). */
  handle(req: IncomingMessage, res: ServerResponse): Promise<void>;
  readonly service: TaskService;
  /** The operators' cross-owner reads (the console's `--admin-tokens` view); not for MCP. */
  readonly operatorView: OperatorView;
  readonly runner: TaskRunner;
  readonly extension: TasksExtension;
  /** Which eras are served, for the start-up line. */
  readonly eras: readonly string[];
  /** The Prometheus metrics (own registry) and the traffic snapshot for a console. */
  readonly metrics: DemoMetrics;
  /** `/metrics` in the Prometheus text format. */
  metricsText(): Promise<string>;
  /** The endpoint's Host and Origin checks, for `/metrics` and `/health`. */
  checkHostAndOrigin(req: IncomingMessage): Refusal | undefined;
  /** Closes the 2025-11-25 sessions (ending their streams); part of {@link close}. */
  closeSessions(): Promise<void>;
  readonly role: "all" | "http" | "worker";
  /**
   * Stops the janitor and the endpoint, stops claiming, gives running tasks `drainMs` to
   * finish, then hands the rest back to the queue (or, in memory, cancels them); closes the
   * store last.
   */
  close(options?: { drainMs?: number }): Promise<void>;
}

const SERVER_INFO = { name: "mcp-tasks-demo", version: "0.1.0" };

/**
 * The demo server, composed from the packages: a `TaskService` over the (instrumented)
 * store, a `TaskRunner`, and `createTasksEndpoint` of `@mcp-tasks/http` for both eras. The
 * demo adds only its own concerns: metrics, owner resolvers, roles and the janitor.
 */
export function createDemoApp(options: DemoAppOptions): DemoApp {
  const requireAuth = options.requireAuth ?? true;
  const role = options.role ?? "all";
  const tools = options.tools ?? demoTools();
  const onError =
    options.onError ??
    ((error: unknown) => console.error("error:", (error as Error)?.message ?? error));
  const metrics = new DemoMetrics({
    storeLabel: options.storeLabel ?? storeLabelOf(options.store),
  });
  const store = metrics.instrumentStore(options.store);
  const service = new TaskService({
    store,
    requireOwner: requireAuth,
    pollIntervalMs: options.pollIntervalMs ?? 500,
  });
  const runner = new TaskRunner({
    service,
    tools,
    claim: role !== "http",
    ...(options.concurrency !== undefined && { concurrency: options.concurrency }),
    ...(options.maxRunningPerOwner !== undefined && {
      maxRunningPerOwner: options.maxRunningPerOwner,
    }),
    ...(options.maxWaitingPerOwner !== undefined && {
      maxWaitingPerOwner: options.maxWaitingPerOwner,
    }),
    ...(options.lease && { lease: options.lease }),
  });
  const legacy = options.legacy === true;
  const endpoint = createTasksEndpoint({
    service,
    runner,
    tools,
    serverInfo: SERVER_INFO,
    owner: (request) => options.resolver.resolve(request),
    requireOwner: requireAuth,
    authChallenge: 'Bearer realm="mcp-tasks-demo"',
    allowedHosts: (options.loopbackOnly ?? true) ? "loopback" : "any",
    ...(options.maxBodyBytes !== undefined && { maxBodyBytes: options.maxBodyBytes }),
    ...(options.limits !== undefined && { limits: options.limits }),
    legacy: {
      enabled: legacy,
      offReason: options.legacy === "off" ? "--legacy off" : "no legacy facade is plugged in",
    },
    onError,
    ...metricsObservers(metrics),
  });
  metrics.attach({
    service,
    runner,
    toolNames: tools.map((tool) => tool.name),
    legacySessions: () => endpoint.legacySessionCount,
  });
  const sweepEvery = options.sweepIntervalMs ?? 0;
  const stopJanitor =
    sweepEvery > 0
      ? startJanitor(service, {
          intervalMs: sweepEvery,
          batch: 500,
          onSweep: (sweep) => sweep.error !== undefined && onError(sweep.error),
        })
      : async () => {};

  return {
    service,
    operatorView: new OperatorView({ store }),
    runner,
    extension: endpoint.extension,
    eras: endpoint.eras,
    metrics,
    metricsText: () => metrics.render(),
    checkHostAndOrigin: (req) => endpoint.checkHostAndOrigin(req),
    closeSessions: () => endpoint.closeSessions(),
    role,
    async handle(req, res) {
      if (role !== "worker") return endpoint.handle(req, res);
      await discardBody(req);
      const error = { code: -32601, message: "This node is a worker: it serves no MCP requests" };
      writeJson(res, 404, { jsonrpc: "2.0", id: null, error });
    },
    async close({ drainMs = 10_000 } = {}) {
      await stopJanitor();
      await endpoint.close();
      await runner.shutdown({ drainMs });
      await options.store.close();
    },
  };
}
