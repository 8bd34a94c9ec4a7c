import type { IncomingMessage, ServerResponse } from "node:http";
import { type Clock, type OperatorView, systemClock, type TaskService } from "@mcp-tasks/core";
import { createConsoleApi } from "./api.js";
import { allow, ConsoleHttpError, errorResponse, MethodNotAllowed, sendJson } from "./http.js";
import { LiveHub } from "./live.js";
import { servePage } from "./page/serve.js";
import { createTaskActions } from "./task-actions.js";
import { type TrafficProvider, TrafficSampler } from "./traffic.js";
import { type ConsoleOwnerResolver, viewerResolver } from "./viewer.js";

/** Settings of {@link createConsoleHandler}. Everything with a default is optional. */
export interface ConsoleOptions {
  /** The tasks to show: the console reads and acts only through this service. */
  readonly service: TaskService;
  /**
   * Who a request comes from, resolved like an MCP request (see {@link ConsoleOwnerResolver});
   * `null` refuses it.
   */
  readonly resolveOwner: ConsoleOwnerResolver;
  /**
   * Operator tokens: a request bearing one sees every owner's tasks (with the owner shown)
   * and the traffic panel. Keep them apart from the tokens MCP clients use. Default none.
   * They need {@link operatorView}.
   */
  readonly adminTokens?: readonly string[];
  /**
   * The operators' reads across owners (`new OperatorView({ store })` over the service's
   * store): required with `adminTokens`. Owners' requests never reach it.
   */
  readonly operatorView?: OperatorView;
  /** Request counts for the operators' traffic panel; no panel without it. */
  readonly traffic?: TrafficProvider;
  /** How often the traffic counts are sampled; default 10 000 ms. */
  readonly trafficSampleMs?: number;
  /** Samples kept (the panel's time window); default 60. */
  readonly trafficSamples?: number;
  /** Tool names offered in the tool filter (any valid name is accepted). Default none. */
  readonly toolNames?: readonly string[];
  /** Where the console is mounted; default `/console`. */
  readonly basePath?: string;
  /** Rows per page; default 25 (at most the service's page limit). */
  readonly pageSize?: number;
  /** Most open live-update streams; default 100. */
  readonly maxStreams?: number;
  /**
   * Most open live-update streams of one owner (every anonymous or same-identity viewer
   * counts as that one owner); default 4. Operators are not limited per owner.
   */
  readonly maxStreamsPerOwner?: number;
  /**
   * Live-update streams kept for operators: owners together open at most `maxStreams`
   * minus this, so owners cannot lock the operators out; default 10.
   */
  readonly operatorStreams?: number;
  /**
   * Told about each live-update stream refused `429` (`"owner"`: that owner's limit;
   * `"all"`: every stream, or the owners' share), e.g. for metrics.
   */
  readonly onLiveRefused?: (limit: "owner" | "all") => void;
  /** Time source for the history and the traffic samples; default the system clock. */
  readonly clock?: Clock;
}

/**
 * A Node request handler serving the console under its base path (the page, its script and
 * style, and a JSON API with a server-sent-events stream); any other path gets a 404.
 * `close()` ends the live streams and stops the traffic sampler.
 */
export interface ConsoleHandler {
  (req: IncomingMessage, res: ServerResponse): Promise<void>;
  /** The base path the console answers under, e.g. `/console`. */
  readonly basePath: string;
  /** Takes a traffic sample now (the sampler does every interval); nothing without a source. */
  sampleTraffic(): Promise<void>;
  close(): Promise<void>;
}

/**
 * Creates the web console over a {@link TaskService}: mount it on any Node HTTP server,
 * e.g. `if (url.startsWith("/console")) return handler(req, res)`.
 */
export function createConsoleHandler(options: ConsoleOptions): ConsoleHandler {
  const service = options.service;
  const operatorView = options.operatorView;
  const adminTokens = (options.adminTokens ?? []).filter((t) => t.length > 0);
  if (adminTokens.length > 0 && operatorView === undefined) {
    throw new TypeError(
      "adminTokens need an operatorView: pass new OperatorView({ store }) over the service's store",
    );
  }
  const clock = options.clock ?? systemClock;
  const basePath = normaliseBase(options.basePath ?? "/console");
  const pageSize = Math.max(1, Math.min(options.pageSize ?? 25, 100));
  const resolveViewer = viewerResolver(adminTokens, options.resolveOwner);
  const hub = new LiveHub((listener) => service.watch(listener), {
    clock,
    historyTasks: 2000,
    historyPerTask: 30,
    maxStreams: options.maxStreams ?? 100,
    maxStreamsPerOwner: options.maxStreamsPerOwner ?? 4,
    operatorReserve: options.operatorStreams ?? 10,
    heartbeatMs: 20_000,
  });
  const sampler =
    options.traffic === undefined
      ? undefined
      : new TrafficSampler(
          options.traffic,
          {
            clock,
            sampleMs: options.trafficSampleMs ?? 10_000,
            keep: options.trafficSamples ?? 60,
          },
          (series) => hub.toOperators("traffic", series),
        );
  const toolNames = [...new Set(options.toolNames ?? [])].sort();

  const api = createConsoleApi({
    actions: createTaskActions({ service, operatorView, pageSize, hub }),
    resolveViewer,
    hub,
    sampler,
    toolNames,
    pageSize,
    onLiveRefused: options.onLiveRefused,
  });

  const handler = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    try {
      const url = new URL(req.url ?? "/", "http://console.invalid");
      if (url.pathname !== basePath && !url.pathname.startsWith(`${basePath}/`)) {
        throw new ConsoleHttpError(404, "Not found.");
      }
      const rest = url.pathname.slice(basePath.length);
      if (rest.startsWith("/api/")) {
        await api(req, res, rest.slice("/api".length), url.searchParams);
        return;
      }
      allow(req.method ?? "GET", "GET", "HEAD");
      if (!servePage(res, rest, basePath)) throw new ConsoleHttpError(404, "Not found.");
    } catch (error) {
      const { status, message } = errorResponse(error);
      if (status === 500) console.error("console:", error);
      if (res.headersSent) {
        res.destroy();
        return;
      }
      if (status === 405 && error instanceof MethodNotAllowed)
        res.setHeader("allow", error.allowed);
      if (error instanceof ConsoleHttpError) {
        for (const [name, value] of Object.entries(error.headers)) res.setHeader(name, value);
      }
      sendJson(res, status, { error: message });
    }
  };

  return Object.assign(handler, {
    basePath,
    sampleTraffic: async () => {
      await sampler?.sample();
    },
    async close() {
      sampler?.close();
      hub.close();
    },
  });
}

function normaliseBase(path: string): string {
  if (!/^\/[A-Za-z0-9._~/-]*$/.test(path)) throw new TypeError(`invalid basePath: ${path}`);
  const trimmed = path.replace(/\/+$/, "");
  return trimmed === "" ? "" : trimmed;
}
