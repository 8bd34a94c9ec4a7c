import { extractTraceContext, type TaskRecord } from "@mcp-tasks/core";
import {
  executionPolicy,
  type NewTask,
  type OwnerScope,
  payloadBytes,
  taskErrors,
  validateNewTask,
} from "@mcp-tasks/core/store";
import type { CreateEntry } from "../create-batching.js";
import type { Row } from "../executor.js";
import { MAX_INT4, toJson } from "../inputs.js";
import { MAX_TTL_MS, MAX_WRITE_TRIES } from "../options.js";
import { newTaskJson } from "../plans/create.js";
import type { StoreContext } from "./context.js";
import { reclaim } from "./housekeeping.js";

/**
 * Creates a task: batched with the creates of the same moment, in a batch sent after the
 * claim lock when it may claim under an owner limit. When nothing was inserted, one read
 * says why: the id is taken, or a bound is reached (refused once the expired rows involved
 * are reclaimed and it still is), or neither (room was made meanwhile: it tries again).
 */
export async function create(
  ctx: StoreContext,
  task: NewTask,
  scope: OwnerScope,
): Promise<TaskRecord> {
  validateNewTask(task, scope.owner);
  if (task.ttlMs !== null && task.ttlMs > MAX_TTL_MS) {
    throw taskErrors.invalidTask(`ttlMs must be at most ${MAX_TTL_MS} (100 years)`);
  }
  const policy = executionPolicy(task.execution);
  if (policy.backoffMs > MAX_INT4) {
    throw taskErrors.invalidTask(`execution.backoffMs must be at most ${MAX_INT4}`);
  }
  // The lease holder was checked by validateNewTask, as in every store.
  const lease = task.lease;
  const request = toJson(task.request, "request");
  const bytes = payloadBytes(task.request.arguments);
  // A client's bad value is dropped here, never stored and never an error.
  const traceContext = extractTraceContext(task.traceContext);
  const entry: CreateEntry = {
    json: newTaskJson(task, scope, request, policy, bytes, traceContext),
    taskId: String(task.taskId),
  };
  // A create that may claim under a running limit is serialised with the claims (its batch
  // goes after the claim lock): its count of the owner's running tasks is then exact across
  // nodes.
  const locked = lease !== undefined && task.ownerLimits?.maxRunningPerOwner !== undefined;
  const { bounds } = ctx.settings;
  for (let attempt = 0; attempt < MAX_WRITE_TRIES; attempt++) {
    const row = locked ? await ctx.creates.locked(entry) : await ctx.creates.submit(entry);
    if (row !== undefined) {
      const record = createdRecord(task, scope, JSON.parse(request), policy, traceContext, row);
      ctx.relay.changed(record, "created");
      // Without a holder the task is in the queue, for any worker to claim.
      if (record.execution.holder === null) ctx.relay.changed(record, "queued");
      return record;
    }
    // Nothing inserted: the id is taken, or the counters say a bound is reached. One read
    // says which.
    const why = await ctx.runner.run(
      "create",
      ctx.plans.createRefusal({ id: task.taskId, ownerKey: scope.ownerKey }),
    );
    const r = why[0]!;
    if (r.taken === true) throw taskErrors.alreadyExists(task.taskId);
    const total = bounds.maxTasks !== null && Number(r.total) >= bounds.maxTasks;
    const own = bounds.maxTasksPerOwner !== null && Number(r.own) >= bounds.maxTasksPerOwner;
    const ownBytes =
      bounds.maxBytesPerOwner !== null && Number(r.own_bytes) + bytes > bounds.maxBytesPerOwner;
    // No bound reached: room was made in between (a delete or an expiry), or the row was
    // refused with the rows before it in its batch. Try again.
    if (!(total || own || ownBytes)) continue;
    // The counters include expired rows not yet removed: remove those involved (a bounded
    // batch), then look again. Refused only when there were none.
    const reclaimed =
      (total ? await reclaim(ctx, null) : 0) +
      (own || ownBytes ? await reclaim(ctx, scope.ownerKey) : 0);
    if (reclaimed > 0) continue;
    if (total) throw taskErrors.storeFull("maxTasks", bounds.maxTasks!);
    if (own) throw taskErrors.storeFull("maxTasksPerOwner", bounds.maxTasksPerOwner!);
    throw taskErrors.storeFull("maxBytesPerOwner", bounds.maxBytesPerOwner!);
  }
  throw taskErrors.storeUnavailable("create kept racing with concurrent writers; try again");
}

/**
 * The record of a created task: `create` returns only the database's part (creation time,
 * lease deadline, version, status message); the rest is what went in. `request` is a copy,
 * as a read would give: the caller's object stays the caller's.
 */
function createdRecord(
  task: NewTask,
  scope: OwnerScope,
  request: TaskRecord["request"],
  policy: ReturnType<typeof executionPolicy>,
  traceContext: ReturnType<typeof extractTraceContext>,
  row: Row,
): TaskRecord {
  const o = scope.owner;
  const holder = (row.lease_holder as string | null) ?? null;
  const createdAt = Number(row.created_at);
  return {
    taskId: task.taskId,
    status: "working",
    statusMessage: (row.status_message as string | null) ?? null,
    createdAt,
    lastUpdatedAt: createdAt,
    ttlMs: task.ttlMs ?? null,
    ttlAnchor: task.ttlAnchor,
    expiresAt: null,
    pollIntervalMs: task.pollIntervalMs ?? null,
    owner: {
      principalId: o.principalId ?? null,
      tenantId: o.tenantId ?? null,
      audience: o.audience ?? null,
    },
    era: task.era,
    request,
    outcome: null,
    inputRequests: {},
    inputResponses: {},
    answeredInputKeys: [],
    inputAnswers: {},
    cancelRequestedAt: null,
    // Field by field, not `{ ...policy, attempt, … }`: see "Hot paths" in docs/architecture.md.
    execution: {
      maxAttempts: policy.maxAttempts,
      backoffMs: policy.backoffMs,
      retryOnError: policy.retryOnError,
      deadlineMs: policy.deadlineMs,
      attempt: holder === null ? 0 : 1,
      holder,
      fencingToken: holder === null ? 0 : 1,
      leaseExpiresAt: holder === null ? null : Number(row.lease_expires_at),
      availableAt: null,
    },
    traceContext,
    version: Number(row.version),
  };
}
