import { taskErrors } from "./errors.js";
import {
  filteredPage,
  type ListNewestInput,
  newestQuery,
  type PageSizes,
  pageSize,
  pageSizes,
} from "./listing.js";
import type { TaskPage, TaskStore } from "./store.js";
import type { TaskRecord } from "./task.js";

/** Settings of an {@link OperatorView}. */
export interface OperatorViewOptions {
  /** The store to read, the same one the {@link TaskService} fronts. */
  readonly store: TaskStore;
  /** Largest page; default 100. */
  readonly maxPageSize?: number;
  /** Page size when none is asked for; default 50 (at most `maxPageSize`). */
  readonly defaultPageSize?: number;
}

/**
 * The operator's reads across owners: every owner's tasks, newest first, and any one task by
 * id. They bypass owner scoping on purpose, so they are not on the {@link TaskService} that
 * every facade holds: build one from the store only where an authenticated operator is
 * served (a console, an admin tool), and act on a task afterwards through the service as
 * its `owner`.
 */
export class OperatorView {
  readonly #store: TaskStore;
  readonly #pageSizes: PageSizes;

  constructor(options: OperatorViewOptions) {
    this.#store = options.store;
    this.#pageSizes = pageSizes(options);
  }

  /** One page of every owner's tasks, newest first, filtered by status and tool. */
  async listNewest(input: ListNewestInput = {}): Promise<TaskPage> {
    const limit = pageSize(input.limit, this.#pageSizes);
    const page = await this.#store.listNewestAcrossOwners(newestQuery(input, limit));
    return filteredPage(page, input, limit, () => true);
  }

  /** One task, whoever owns it; `not_found_or_unauthorized` when it is missing. */
  async get(taskId: string): Promise<TaskRecord> {
    const record = await this.#store.getAcrossOwners(taskId);
    if (record.taskId !== taskId) throw taskErrors.notFound(taskId);
    return record;
  }
}
