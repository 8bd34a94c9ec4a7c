import type { NewestQuery, TaskPage } from "./store.js";
import type { TaskRecord, TaskStatus } from "./task.js";

/** What a caller asks for when listing newest first (a console's view). */
export interface ListNewestInput {
  readonly statuses?: readonly TaskStatus[];
  readonly toolNames?: readonly string[];
  readonly cursor?: string;
  readonly limit?: number;
}

/** Page sizes: `limit` within 1 and `max`, `fallback` when absent. */
export function pageSize(limit: number | undefined, fallback: number, max: number): number {
  if (limit === undefined) return fallback;
  if (!Number.isFinite(limit) || limit < 1) return 1;
  return Math.min(Math.floor(limit), max);
}

/** The store query of a newest-first listing. */
export function newestQuery(input: ListNewestInput, limit: number): NewestQuery {
  return {
    limit,
    ...(input.cursor !== undefined && { cursor: input.cursor }),
    ...(input.statuses !== undefined && { statuses: input.statuses }),
    ...(input.toolNames !== undefined && { toolNames: input.toolNames }),
  };
}

/** Re-applies the filters to what a store returned (defence in depth, as for `list`). */
export function filteredPage(
  page: TaskPage,
  input: ListNewestInput,
  limit: number,
  visible: (task: TaskRecord) => boolean,
): TaskPage {
  const statuses = input.statuses && input.statuses.length > 0 ? new Set(input.statuses) : null;
  const tools = input.toolNames && input.toolNames.length > 0 ? new Set(input.toolNames) : null;
  const tasks = page.tasks
    .filter(
      (t) =>
        visible(t) &&
        (statuses === null || statuses.has(t.status)) &&
        (tools === null || tools.has(t.request.toolName)),
    )
    .slice(0, limit);
  return page.nextCursor === undefined ? { tasks } : { tasks, nextCursor: page.nextCursor };
}
