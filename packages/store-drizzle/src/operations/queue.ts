import type {
  ClaimOptions,
  OrphanSweep,
  TaskChangeKind,
  TaskRecord,
  TaskStatus,
} from "@mcp-tasks/core";
import {
  type OwnerScope,
  orphanSweepOf,
  validateLeaseHolder,
  validateLeaseMs,
  validateOwnerLimits,
} from "@mcp-tasks/core/store";
import { fenced, positiveLimit, requireFence } from "../inputs.js";
import { toRecord } from "../mapping.js";
import { SWEEP_BATCH } from "../options.js";
import type { StoreContext } from "./context.js";
import { transition } from "./transitions.js";

/** The queue: claims, leases, giving a task back, and recovering the tasks of lost runs. */

export async function claim(
  ctx: StoreContext,
  holder: string,
  options: ClaimOptions,
): Promise<TaskRecord[]> {
  validateLeaseHolder(holder, "holder");
  validateLeaseMs(options.leaseMs);
  const leaseMs = options.leaseMs;
  const limit = positiveLimit(options.limit, 0);
  const tools = options.toolNames;
  if (limit === 0 || (tools !== undefined && tools.length === 0)) return [];
  validateOwnerLimits(options);
  const statement = ctx.plans.claim({
    holder,
    leaseMs,
    now: ctx.now(),
    limit,
    maxRunningPerOwner: options.maxRunningPerOwner ?? null,
    maxWaitingPerOwner: options.maxWaitingPerOwner ?? null,
    tools: tools === undefined ? null : JSON.stringify(tools),
    ...ctx.claimCursor.after,
  });
  // With an owner limit, after the claim lock: claims run one at a time across the
  // cluster, so each counts the running tasks the ones before it took. Without one there
  // is nothing to count: claims run side by side, on disjoint rows (SKIP LOCKED).
  const limited = options.maxRunningPerOwner != null || options.maxWaitingPerOwner != null;
  // Riding with this store's endings of this turn when some leave: it takes their places.
  const rows = ctx.claimCursor.stoppedAt(
    limited
      ? await (ctx.settles.claimAfterEndings(statement) ?? ctx.runner.locked("claim", statement))
      : await ctx.runner.run("claim", statement),
  );
  // RETURNING gives no order: oldest first, as they were picked.
  rows.sort((x, y) => Number(x.seq) - Number(y.seq));
  return rows.map((row) => ctx.relay.changed(toRecord(row), "claimed"));
}

export async function renewLease(
  ctx: StoreContext,
  taskId: string,
  scope: OwnerScope,
  leaseMs: number,
): Promise<boolean> {
  requireFence(scope, "renewLease");
  validateLeaseMs(leaseMs);
  const input = { ...fenced(taskId, scope, ctx.now()), leaseMs };
  const rows = await ctx.runner.run("renewLease", ctx.plans.renewLease(input));
  return rows.length > 0;
}

export async function releaseLease(
  ctx: StoreContext,
  taskId: string,
  scope: OwnerScope,
): Promise<boolean> {
  requireFence(scope, "releaseLease");
  const rows = await ctx.runner.run(
    "releaseLease",
    ctx.plans.releaseLease(fenced(taskId, scope, ctx.now())),
  );
  for (const row of rows) ctx.relay.changedRow(row, requeuedOrEnded(row.status as TaskStatus));
  return rows.length > 0;
}

export async function requeue(
  ctx: StoreContext,
  taskId: string,
  scope: OwnerScope,
  statusMessage: string | null,
): Promise<TaskRecord> {
  const record = await transition(
    ctx,
    "requeue",
    async () =>
      (
        await ctx.runner.run(
          "requeue",
          ctx.plans.requeue({
            ...fenced(taskId, scope, ctx.now()),
            message: statusMessage ?? null,
          }),
        )
      )[0],
    taskId,
    scope,
    null,
  );
  return ctx.relay.changed(record, requeuedOrEnded(record.status));
}

export async function recoverOrphans(
  ctx: StoreContext,
  options: { limit?: number } = {},
): Promise<OrphanSweep> {
  let left = positiveLimit(options.limit, Number.POSITIVE_INFINITY);
  let requeued = 0;
  const failedTasks: TaskRecord[] = [];
  const cancelledTasks: TaskRecord[] = [];
  // Bounded batches, so one sweep never holds many row locks or one long transaction.
  while (left > 0) {
    const batch = Math.min(left, SWEEP_BATCH);
    const rows = await ctx.runner.run(
      "recoverOrphans",
      ctx.plans.recoverOrphans({ now: ctx.now(), limit: batch }),
    );
    for (const row of rows) {
      if (row.status === "failed") {
        failedTasks.push(ctx.relay.changed(toRecord(row), "status_changed"));
      } else if (row.status === "cancelled") {
        cancelledTasks.push(ctx.relay.changed(toRecord(row), "status_changed"));
      } else {
        requeued++;
        ctx.relay.changedRow(row, "queued");
      }
    }
    left -= rows.length;
    if (rows.length < batch) break;
  }
  return orphanSweepOf(requeued, failedTasks, cancelledTasks);
}

/** A task given back to the queue is `queued`; one that ended instead (a cancel request) changed status. */
function requeuedOrEnded(status: TaskStatus): TaskChangeKind {
  return status === "working" || status === "input_required" ? "queued" : "status_changed";
}
