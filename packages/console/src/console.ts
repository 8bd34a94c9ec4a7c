import type { IncomingMessage, ServerResponse } from "node:http";
import {
  type Clock,
  isTerminal,
  type OperatorView,
  systemClock,
  type TaskRecord,
  type TaskService,
} from "@mcp-tasks/core";
import { ownerKey } from "@mcp-tasks/core/store";
import { answerFor } from "./answers.js";
import { ConsoleHttpError, errorResponse, readJsonBody, sendJson } from "./http.js";
import { LiveHub } from "./live.js";
import { servePage } from "./page/serve.js";
import { type TrafficProvider, TrafficSampler } from "./traffic.js";
import { expectNoQuery, type ListRequest, parseListQuery, parseTaskId } from "./validate.js";
import {
  type ConsoleOwnerResolver,
  type ConsoleViewer,
  ownerLabel,
  viewerResolver,
} from "./viewer.js";
import { taskDetail, taskRow } from "./views.js";

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

const MAX_BODY = 64 * 1024;
/** The `Retry-After` of a refused live view, in seconds (views end when pages close). */
const LIVE_RETRY_AFTER_S = 5;

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
  /** The cross-owner reads: only operator viewers get here, and they exist only with it. */
  const acrossOwners = (): OperatorView => {
    if (operatorView === undefined) throw new ConsoleHttpError(403, "Not an operator.");
    return operatorView;
  };
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

  /** Reads a task as the viewer may: through its owner scope, or across owners. */
  const read = (viewer: ConsoleViewer, taskId: string): Promise<TaskRecord> =>
    viewer.kind === "operator" ? acrossOwners().get(taskId) : service.get(viewer.owner, taskId);
  /** Who an action on `task` is made as: the viewer, or for an operator the task's owner. */
  const actor = (viewer: ConsoleViewer, task: TaskRecord) =>
    viewer.kind === "operator" ? task.owner : viewer.owner;

  async function list(viewer: ConsoleViewer, query: ListRequest) {
    const operator = viewer.kind === "operator";
    if (query.taskId !== undefined) {
      // Search by id: the one task, when the viewer may see it and it passes the filters.
      let tasks: TaskRecord[] = [];
      try {
        const task = await read(viewer, query.taskId);
        const statusOk = query.statuses === undefined || query.statuses.includes(task.status);
        const toolOk =
          query.toolNames === undefined || query.toolNames.includes(task.request.toolName);
        if (statusOk && toolOk) tasks = [task];
      } catch (error) {
        if (errorResponse(error).status !== 404) throw error;
      }
      return { tasks: tasks.map((t) => taskRow(t, operator)) };
    }
    const input = { ...query, limit: query.limit ?? pageSize };
    const page = operator
      ? await acrossOwners().listNewest(input)
      : await service.listNewest(viewer.owner, input);
    return {
      tasks: page.tasks.map((t) => taskRow(t, operator)),
      ...(page.nextCursor !== undefined && { nextCursor: page.nextCursor }),
    };
  }

  async function cancel(viewer: ConsoleViewer, taskId: string) {
    const task = await read(viewer, taskId);
    const as = actor(viewer, task);
    if (isTerminal(task.status)) {
      throw new ConsoleHttpError(409, `The task has already ended (${task.status}).`);
    }
    // Era-correct: core's one cancel rule (at once for 2025-11-25, cooperative for 2026).
    const after = await service.cancelAsItsEra(as, task, "Cancelled from the console.");
    return taskDetail(after, viewer.kind === "operator", hub.observed(taskId));
  }

  async function answer(viewer: ConsoleViewer, taskId: string, body: unknown) {
    const task = await read(viewer, taskId);
    if (task.status !== "input_required") {
      throw new ConsoleHttpError(409, "The task is not waiting for input.");
    }
    const { key, response } = answerFor(task.inputRequests, body);
    const result = await service.submitInput(actor(viewer, task), taskId, { [key]: response });
    return taskDetail(result.task, viewer.kind === "operator", hub.observed(taskId));
  }

  async function api(
    req: IncomingMessage,
    res: ServerResponse,
    path: string,
    params: URLSearchParams,
  ): Promise<void> {
    const method = req.method ?? "GET";
    const viewer = await resolveViewer(req);
    const operator = viewer.kind === "operator";
    if (path === "/session") {
      allow(method, "GET");
      expectNoQuery(params);
      return sendJson(res, 200, {
        role: viewer.kind,
        owner: viewer.kind === "owner" ? ownerLabel(viewer.owner) : null,
        toolNames,
        traffic: operator && sampler !== undefined,
        pageSize,
      });
    }
    if (path === "/tasks") {
      allow(method, "GET");
      return sendJson(res, 200, await list(viewer, parseListQuery(params, 100)));
    }
    if (path === "/events") {
      allow(method, "GET");
      expectNoQuery(params);
      const opened = hub.open(
        res,
        viewer.kind === "operator" ? null : ownerKey(viewer.owner),
        (id) => read(viewer, id),
        (task) => taskRow(task, operator),
      );
      if (opened !== "opened") {
        options.onLiveRefused?.(opened);
        throw new ConsoleHttpError(
          429,
          opened === "owner"
            ? "You have too many live views open; close some and retry."
            : "Too many live views are open on this server; retry shortly.",
          { "retry-after": String(LIVE_RETRY_AFTER_S) },
        );
      }
      // A fresh sample for the new operator view, so its totals are current at once.
      if (operator && sampler !== undefined) void sampler.sample();
      return;
    }
    if (path === "/traffic") {
      allow(method, "GET");
      expectNoQuery(params);
      if (!operator) throw new ConsoleHttpError(403, "The traffic panel is for operators.");
      if (sampler === undefined)
        throw new ConsoleHttpError(404, "No traffic source is configured.");
      return sendJson(res, 200, sampler.series());
    }
    const match = /^\/tasks\/([^/]*)(\/cancel|\/input)?$/.exec(path);
    if (match) {
      const taskId = parseTaskId(decodeSegment(match[1]!));
      expectNoQuery(params);
      switch (match[2]) {
        case undefined:
          allow(method, "GET");
          return sendJson(
            res,
            200,
            taskDetail(await read(viewer, taskId), operator, hub.observed(taskId)),
          );
        case "/cancel":
          allow(method, "POST");
          return sendJson(res, 200, await cancel(viewer, taskId));
        default:
          allow(method, "POST");
          return sendJson(
            res,
            200,
            await answer(viewer, taskId, await readJsonBody(req, MAX_BODY)),
          );
      }
    }
    throw new ConsoleHttpError(404, "No such console endpoint.");
  }

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

class MethodNotAllowed extends ConsoleHttpError {
  readonly allowed: string;
  constructor(allowed: readonly string[]) {
    super(405, `Use ${allowed.join(" or ")} here.`);
    this.allowed = allowed.join(", ");
  }
}

function allow(method: string, ...allowed: string[]): void {
  if (!allowed.includes(method)) throw new MethodNotAllowed(allowed);
}

function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    throw new ConsoleHttpError(400, "The task id in the path is not valid.");
  }
}

function normaliseBase(path: string): string {
  if (!/^\/[A-Za-z0-9._~/-]*$/.test(path)) throw new TypeError(`invalid basePath: ${path}`);
  const trimmed = path.replace(/\/+$/, "");
  return trimmed === "" ? "" : trimmed;
}
