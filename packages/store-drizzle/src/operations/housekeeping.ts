import { type OwnerScope, taskErrors } from "@mcp-tasks/core/store";
import { byId, positiveLimit } from "../inputs.js";
import { SWEEP_BATCH } from "../options.js";
import type { StoreContext } from "./context.js";

/** Removing tasks: a delete, the expired rows, and their usage with them. */

export async function deleteTask(
  ctx: StoreContext,
  taskId: string,
  scope: OwnerScope,
): Promise<void> {
  const rows = await ctx.runner.run("delete", ctx.plans.delete(byId(taskId, scope, ctx.now())));
  const row = rows[0];
  if (row === undefined) throw taskErrors.notFound(taskId);
  ctx.relay.changedRow(row, "deleted");
}

export async function cleanupExpired(
  ctx: StoreContext,
  options: { limit?: number } = {},
): Promise<number> {
  let left = positiveLimit(options.limit, Number.POSITIVE_INFINITY);
  let removed = 0;
  // Bounded batches, so one sweep never holds many row locks or one long transaction.
  while (left > 0) {
    const batch = Math.min(left, SWEEP_BATCH);
    const rows = await ctx.runner.run(
      "cleanupExpired",
      ctx.plans.cleanup({ now: ctx.now(), limit: batch }),
    );
    for (const row of rows) ctx.relay.changedRow(row, "deleted");
    removed += rows.length;
    left -= rows.length;
    if (rows.length < batch) break;
  }
  // Owners whose last tasks went keep no counters.
  if (removed > 0) await ctx.runner.run("cleanupExpired", ctx.plans.pruneUsage({}));
  return removed;
}

/**
 * Removes up to one batch of expired rows, of one owner (`ownerKey`) or of any (`null`),
 * their counters in the same statement; how many. What a write refused by the counters
 * does before it is refused for good.
 */
export async function reclaim(ctx: StoreContext, ownerKey: string | null): Promise<number> {
  const now = ctx.now();
  const rows = await ctx.runner.run(
    "create",
    ownerKey === null
      ? ctx.plans.cleanup({ now, limit: SWEEP_BATCH })
      : ctx.plans.reclaimOwner({ now, limit: SWEEP_BATCH, ownerKey }),
  );
  for (const row of rows) ctx.relay.changedRow(row, "deleted");
  return rows.length;
}
