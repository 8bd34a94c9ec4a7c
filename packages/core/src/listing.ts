import { type OwnerScope, scopeAllows } from "./owner.js";
import type { ListTasksInput } from "./service-options.js";
import type { NewestQuery, TaskPage, TaskStore } from "./store.js";
import type { TaskRecord, TaskStatus } from "./task.js";

/** What a caller asks for when listing newest first (a console's view). */
export interface ListNewestInput {
  readonly statuses?: readonly TaskStatus[];
  readonly toolNames?: readonly string[];
  readonly cursor?: string;
  readonly limit?: number;
}

/** A listing's page sizes: when none is asked for, and the most one may ask for. */
export interface PageSizes {
  readonly fallback: number;
  readonly max: number;
}

/**
 * The page sizes of a service or view from its options: `maxPageSize` default 100,
 * `defaultPageSize` default 50 and at most `maxPageSize`; a `RangeError` below 1.
 */
export function pageSizes(options: {
  readonly defaultPageSize?: number;
  readonly maxPageSize?: number;
}): PageSizes {
  const max = options.maxPageSize ?? 100;
  const fallback = Math.min(options.defaultPageSize ?? 50, max);
  if (!(max >= 1 && fallback >= 1)) throw new RangeError("page sizes must be at least 1");
  return { fallback, max };
}

/** The size of one page: `limit` within 1 and `sizes.max`, `sizes.fallback` when absent. */
export function pageSize(limit: number | undefined, sizes: PageSizes): number {
  if (limit === undefined) return sizes.fallback;
  if (!Number.isFinite(limit) || limit < 1) return 1;
  return Math.min(Math.floor(limit), sizes.max);
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

/** One page of `scope`'s tasks, oldest first, each row re-checked against the scope. */
export async function listOwnTasks(
  store: TaskStore,
  scope: OwnerScope,
  input: ListTasksInput,
  sizes: PageSizes,
): Promise<TaskPage> {
  const limit = pageSize(input.limit, sizes);
  const page = await store.list(scope, {
    limit,
    ...(input.cursor !== undefined && { cursor: input.cursor }),
    ...(input.statuses !== undefined && { statuses: input.statuses }),
  });
  return filteredPage(page, input, limit, (t) => scopeAllows(scope, t.owner));
}

/** One page of `scope`'s tasks, newest first, filtered, each row re-checked. */
export async function listOwnNewest(
  store: TaskStore,
  scope: OwnerScope,
  input: ListNewestInput,
  sizes: PageSizes,
): Promise<TaskPage> {
  const limit = pageSize(input.limit, sizes);
  const page = await store.listNewest(scope, newestQuery(input, limit));
  return filteredPage(page, input, limit, (t) => scopeAllows(scope, t.owner));
}
