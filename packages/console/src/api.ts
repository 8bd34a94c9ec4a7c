import type { IncomingMessage, ServerResponse } from "node:http";
import { ownerKey } from "@mcp-tasks/core/store";
import { allow, ConsoleHttpError, readJsonBody, sendJson } from "./http.js";
import type { LiveHub } from "./live.js";
import type { TaskActions } from "./task-actions.js";
import type { TrafficSampler } from "./traffic.js";
import { expectNoQuery, parseListQuery, parseTaskId } from "./validate.js";
import { type ConsoleViewer, ownerLabel } from "./viewer.js";
import { taskDetail, taskRow } from "./views.js";

const MAX_BODY = 64 * 1024;
/** The `Retry-After` of a refused live view, in seconds (views end when pages close). */
const LIVE_RETRY_AFTER_S = 5;

/** What the console's JSON API serves from. */
export interface ConsoleApiDeps {
  readonly actions: TaskActions;
  readonly resolveViewer: (req: IncomingMessage) => Promise<ConsoleViewer>;
  readonly hub: LiveHub;
  readonly sampler: TrafficSampler | undefined;
  /** Tool names offered in the tool filter. */
  readonly toolNames: readonly string[];
  readonly pageSize: number;
  readonly onLiveRefused: ((limit: "owner" | "all") => void) | undefined;
}

/** Serves one request of the JSON API; `path` is the part after `<base>/api`. */
export type ConsoleApi = (
  req: IncomingMessage,
  res: ServerResponse,
  path: string,
  params: URLSearchParams,
) => Promise<void>;

/**
 * The console's JSON API: `/session`, `/tasks` (a page, or one task's detail, cancel and
 * input), `/events` (the live stream) and `/traffic` (operators). Refusals are thrown as
 * {@link ConsoleHttpError}s for the handler to answer.
 */
export function createConsoleApi(deps: ConsoleApiDeps): ConsoleApi {
  const { actions, resolveViewer, hub, sampler, toolNames, pageSize } = deps;
  return async (req, res, path, params) => {
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
      return sendJson(res, 200, await actions.list(viewer, parseListQuery(params, 100)));
    }
    if (path === "/events") {
      allow(method, "GET");
      expectNoQuery(params);
      const opened = hub.open(
        res,
        viewer.kind === "operator" ? null : ownerKey(viewer.owner),
        (id) => actions.read(viewer, id),
        (task) => taskRow(task, operator),
      );
      if (opened !== "opened") {
        deps.onLiveRefused?.(opened);
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
            taskDetail(await actions.read(viewer, taskId), operator, hub.observed(taskId)),
          );
        case "/cancel":
          allow(method, "POST");
          return sendJson(res, 200, await actions.cancel(viewer, taskId));
        default:
          allow(method, "POST");
          return sendJson(
            res,
            200,
            await actions.answer(viewer, taskId, await readJsonBody(req, MAX_BODY)),
          );
      }
    }
    throw new ConsoleHttpError(404, "No such console endpoint.");
  };
}

function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    throw new ConsoleHttpError(400, "The task id in the path is not valid.");
  }
}
