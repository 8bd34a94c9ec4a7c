import type { TaskPage, TaskRecord } from "@mcp-tasks/core";
import {
  decodeSequenceCursor,
  encodeCursor,
  type ListQuery,
  type NewestQuery,
  type OwnerScope,
  taskErrors,
  type UsageAudit,
  type UsageSnapshot,
} from "@mcp-tasks/core/store";
import type { Row } from "../executor.js";
import { alsoUnowned, byId, storableId, storedKey } from "../inputs.js";
import { toRecord } from "../mapping.js";
import { TOTAL_KEY } from "../plans/context.js";
import type { StoreContext } from "./context.js";

/** Reads: one task, pages of tasks, and the usage audit. */

export async function get(
  ctx: StoreContext,
  taskId: string,
  scope: OwnerScope,
): Promise<TaskRecord> {
  const row = await ctx.gets.submit(byId(taskId, scope, ctx.now()));
  if (row === undefined) throw taskErrors.notFound(taskId);
  return toRecord(row);
}

export async function list(
  ctx: StoreContext,
  scope: OwnerScope,
  query: ListQuery,
): Promise<TaskPage> {
  const after = query.cursor === undefined ? 0 : decodeSequenceCursor(query.cursor);
  const { limit, statuses } = pageParams(ctx, query);
  const rows = await ctx.runner.run(
    "list",
    ctx.plans.list({
      ownerKey: storedKey(scope),
      withUnowned: alsoUnowned(scope),
      after,
      now: ctx.now(),
      statuses,
      limit: limit + 1,
    }),
  );
  return page(rows, limit);
}

export async function listNewest(
  ctx: StoreContext,
  scope: OwnerScope,
  query: NewestQuery,
): Promise<TaskPage> {
  const { before, limit, statuses, tools } = newestParams(ctx, query);
  const rows = await ctx.runner.run(
    "listNewest",
    ctx.plans.listNewest({
      ownerKey: storedKey(scope),
      withUnowned: alsoUnowned(scope),
      before,
      now: ctx.now(),
      statuses,
      limit: limit + 1,
      tools,
    }),
  );
  return page(rows, limit);
}

export async function listNewestAcrossOwners(
  ctx: StoreContext,
  query: NewestQuery,
): Promise<TaskPage> {
  const { before, limit, statuses, tools } = newestParams(ctx, query);
  const rows = await ctx.runner.run(
    "listNewestAcrossOwners",
    ctx.plans.listNewestAcrossOwners({ before, now: ctx.now(), statuses, limit: limit + 1, tools }),
  );
  return page(rows, limit);
}

export async function getAcrossOwners(ctx: StoreContext, taskId: string): Promise<TaskRecord> {
  const rows = await ctx.runner.run(
    "getAcrossOwners",
    ctx.plans.getAcrossOwners({ id: storableId(taskId), now: ctx.now() }),
  );
  if (rows[0] === undefined) throw taskErrors.notFound(taskId);
  return toRecord(rows[0]);
}

/**
 * The quota usage counters next to the same numbers counted from the task table: they
 * agree unless something wrote the table around the store (see the migration's backfill).
 * Both count stored rows, expired ones not yet removed included. A full scan: for tests
 * and audits, not for the hot path.
 */
export async function auditUsage(ctx: StoreContext): Promise<UsageAudit> {
  const [counters, recount] = await Promise.all([
    ctx.runner.run("auditUsage", ctx.plans.usageCounters({})),
    ctx.runner.run("auditUsage", ctx.plans.usageRecount({})),
  ]);
  return { counters: usageSnapshot(counters), recount: usageSnapshot(recount) };
}

/** A page's size (at most `maxPageSize`) and its status filter, as the statements take them. */
function pageParams(ctx: StoreContext, query: ListQuery) {
  return {
    limit: Math.max(1, Math.min(Math.floor(query.limit) || 1, ctx.settings.maxPageSize)),
    statuses: query.statuses && query.statuses.length > 0 ? query.statuses.join(",") : null,
  };
}

function newestParams(ctx: StoreContext, query: NewestQuery) {
  return {
    ...pageParams(ctx, query),
    // Past every bigint identity value the table will hand out.
    before:
      query.cursor === undefined ? Number.MAX_SAFE_INTEGER : decodeSequenceCursor(query.cursor),
    tools: query.toolNames && query.toolNames.length > 0 ? JSON.stringify(query.toolNames) : null,
  };
}

/** The first `limit` rows (the statements fetch one more) and the cursor past them, if any. */
function page(rows: readonly Row[], limit: number): TaskPage {
  const tasks = rows.slice(0, limit).map(toRecord);
  if (rows.length <= limit) return { tasks };
  return { tasks, nextCursor: encodeCursor(Number(rows[limit - 1]!.seq)) };
}

/** Usage rows (owner key, tasks, bytes) as a snapshot; the total is the sum of the owners'. */
function usageSnapshot(rows: readonly Row[]): UsageSnapshot {
  const owners: Record<string, { tasks: number; bytes: number }> = {};
  let tasks = 0;
  let totalRow: number | null = null;
  for (const row of rows) {
    const key = row.owner_key as string;
    const counts = { tasks: Number(row.tasks), bytes: Number(row.bytes) };
    if (key === TOTAL_KEY) {
      totalRow = counts.tasks;
      continue;
    }
    tasks += counts.tasks;
    if (counts.tasks !== 0 || counts.bytes !== 0) owners[key] = counts;
  }
  // The counters keep the total apart: report theirs, the recount has none.
  return { tasks: totalRow ?? tasks, owners };
}
