import { TASK_STATUSES, type TaskStatus } from "@mcp-tasks/core";
import { ConsoleHttpError } from "./http.js";

/*
 * Every value the page sends is checked here before it reaches the task service: bad input
 * is a 400 with a message, never an exception deeper down.
 */

const TASK_ID = /^[A-Za-z0-9_-]{1,128}$/;
/** MCP tool names: 1–128 of letters, digits, `_`, `-`, `.` (and `/` some servers use). */
const TOOL_NAME = /^[A-Za-z0-9_./-]{1,128}$/;
const CURSOR = /^[A-Za-z0-9._-]{1,200}$/;

/** A task id from a path or a search box. */
export function parseTaskId(value: string): string {
  if (!TASK_ID.test(value)) {
    throw new ConsoleHttpError(
      400,
      "A task id is 1 to 128 letters, digits, '-' or '_' (as shown in the task list).",
    );
  }
  return value;
}

/** What the task list was asked for. */
export interface ListRequest {
  readonly statuses?: readonly TaskStatus[];
  readonly toolNames?: readonly string[];
  readonly cursor?: string;
  readonly limit?: number;
  /** Search by task id: a list of at most that one task. */
  readonly taskId?: string;
}

const LIST_PARAMS = new Set(["status", "tool", "cursor", "limit", "id"]);

/** The task list's query string: `status`, `tool`, `cursor`, `limit`, `id`, each at most once. */
export function parseListQuery(params: URLSearchParams, maxLimit: number): ListRequest {
  const seen = new Set<string>();
  for (const name of params.keys()) {
    if (!LIST_PARAMS.has(name)) throw new ConsoleHttpError(400, `Unknown parameter '${name}'.`);
    if (seen.has(name)) throw new ConsoleHttpError(400, `Parameter '${name}' given twice.`);
    seen.add(name);
  }
  const out: {
    statuses?: TaskStatus[];
    toolNames?: string[];
    cursor?: string;
    limit?: number;
    taskId?: string;
  } = {};
  const status = params.get("status");
  if (status !== null && status !== "") {
    if (!(TASK_STATUSES as readonly string[]).includes(status)) {
      throw new ConsoleHttpError(400, `Unknown status '${status.slice(0, 40)}'.`);
    }
    out.statuses = [status as TaskStatus];
  }
  const tool = params.get("tool");
  if (tool !== null && tool !== "") {
    if (!TOOL_NAME.test(tool)) throw new ConsoleHttpError(400, "That is not a valid tool name.");
    out.toolNames = [tool];
  }
  const cursor = params.get("cursor");
  if (cursor !== null && cursor !== "") {
    if (!CURSOR.test(cursor)) {
      throw new ConsoleHttpError(400, "That page cursor is not valid; start from the first page.");
    }
    out.cursor = cursor;
  }
  const limit = params.get("limit");
  if (limit !== null && limit !== "") {
    const n = /^[0-9]{1,4}$/.test(limit) ? Number(limit) : Number.NaN;
    if (!(n >= 1 && n <= maxLimit)) {
      throw new ConsoleHttpError(400, `limit must be a whole number from 1 to ${maxLimit}.`);
    }
    out.limit = n;
  }
  const id = params.get("id");
  if (id !== null && id.trim() !== "") out.taskId = parseTaskId(id.trim());
  return out;
}

/** Refuses any query string on endpoints that take none. */
export function expectNoQuery(params: URLSearchParams): void {
  for (const name of params.keys()) {
    throw new ConsoleHttpError(400, `Unknown parameter '${name.slice(0, 40)}'.`);
  }
}
