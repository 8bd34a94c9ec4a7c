import { isTerminal, type OperatorView, type TaskRecord, type TaskService } from "@mcp-tasks/core";
import { answerFor } from "./answers.js";
import { ConsoleHttpError, errorResponse } from "./http.js";
import type { LiveHub } from "./live.js";
import type { ListRequest } from "./validate.js";
import type { ConsoleViewer } from "./viewer.js";
import { type TaskDetail, type TaskRow, taskDetail, taskRow } from "./views.js";

/** What {@link createTaskActions} reads and acts through. */
export interface TaskActionDeps {
  readonly service: TaskService;
  /** The cross-owner reads; only operator viewers use it, and they exist only with it. */
  readonly operatorView: OperatorView | undefined;
  /** Rows per page when the query names no limit. */
  readonly pageSize: number;
  /** The live hub, whose observed changes make a task's history. */
  readonly hub: LiveHub;
}

/** The console's reads and actions on tasks, each as the viewer may make it. */
export interface TaskActions {
  /** Reads a task as the viewer may: through its owner scope, or across owners. */
  read(viewer: ConsoleViewer, taskId: string): Promise<TaskRecord>;
  /** A page of the viewer's tasks, newest first (or the one task searched by id). */
  list(
    viewer: ConsoleViewer,
    query: ListRequest,
  ): Promise<{ tasks: TaskRow[]; nextCursor?: string }>;
  /** Cancels a task that has not ended, as its era cancels; `409` when it has. */
  cancel(viewer: ConsoleViewer, taskId: string): Promise<TaskDetail>;
  /** Answers a task's pending input request from a form body; `409` when none is pending. */
  answer(viewer: ConsoleViewer, taskId: string, body: unknown): Promise<TaskDetail>;
}

/** The reads and actions of the console over `deps.service` (and, for operators, its view). */
export function createTaskActions(deps: TaskActionDeps): TaskActions {
  const { service, operatorView, pageSize, hub } = deps;
  /** The cross-owner reads: only operator viewers get here, and they exist only with it. */
  const acrossOwners = (): OperatorView => {
    if (operatorView === undefined) throw new ConsoleHttpError(403, "Not an operator.");
    return operatorView;
  };
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

  return { read, list, cancel, answer };
}
