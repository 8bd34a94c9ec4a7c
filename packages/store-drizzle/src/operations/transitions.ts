import type {
  InputRequest,
  InputResponse,
  JsonRpcErrorObject,
  SubmitInputResult,
  TakeInputResult,
  TaskChangeKind,
  TaskRecord,
} from "@mcp-tasks/core";
import {
  ACTIVE_STATUSES,
  assertFence,
  assertFreshInputKeys,
  assertIntentAllowed,
  assertStorable,
  type Intent,
  type OwnerScope,
  ownerKey,
  payloadBytes,
  taskErrors,
  utf8Length,
} from "@mcp-tasks/core/store";
import type { Row } from "../executor.js";
import { byId, fenced, NO_INPUT, storableId, storedKey, toJson } from "../inputs.js";
import { toRecord } from "../mapping.js";
import { MAX_WRITE_TRIES } from "../options.js";
import type { Outcome } from "../plans/settle.js";
import type { StoreContext } from "./context.js";
import { reclaim } from "./housekeeping.js";
import { get } from "./reads.js";

/** The lifecycle writes of a task: its endings, input requests and answers, cancellation. */

export async function complete(
  ctx: StoreContext,
  taskId: string,
  scope: OwnerScope,
  result: Readonly<Record<string, unknown>>,
  statusMessage: string | null,
): Promise<TaskRecord> {
  assertStorable("the result", result);
  assertStorable("the status message", statusMessage);
  const text = toJson(result, "result");
  return settle(ctx, "complete", taskId, scope, {
    status: "completed",
    result: text,
    error: null,
    statusMessage,
    bytes: utf8Length(text),
  });
}

export async function fail(
  ctx: StoreContext,
  taskId: string,
  scope: OwnerScope,
  error: JsonRpcErrorObject,
  statusMessage: string | null | undefined,
): Promise<TaskRecord> {
  assertStorable("the error", error);
  assertStorable("the status message", statusMessage);
  const text = toJson(error, "error");
  return settle(ctx, "fail", taskId, scope, {
    status: "failed",
    result: null,
    error: text,
    statusMessage: statusMessage === undefined ? (error?.message ?? null) : statusMessage,
    bytes: utf8Length(text),
  });
}

export async function markCancelled(
  ctx: StoreContext,
  taskId: string,
  scope: OwnerScope,
  statusMessage: string | null,
): Promise<TaskRecord> {
  assertStorable("the status message", statusMessage);
  return settle(ctx, "markCancelled", taskId, scope, {
    status: "cancelled",
    result: null,
    error: null,
    statusMessage,
    bytes: 0,
  });
}

export async function requireInput(
  ctx: StoreContext,
  taskId: string,
  scope: OwnerScope,
  requests: Readonly<Record<string, InputRequest>>,
  statusMessage: string | null | undefined,
): Promise<TaskRecord> {
  assertStorable("the input requests", requests);
  assertStorable("the status message", statusMessage);
  const own = {
    requests: toJson(requests, "input requests"),
    setMessage: statusMessage !== undefined,
    message: statusMessage ?? null,
  };
  try {
    // The batch's own shape (empty, key length, method) is checked before any write.
    assertFreshInputKeys(NO_INPUT, requests);
  } catch (error) {
    await explainMiss(ctx, taskId, scope, "requireInput");
    throw error;
  }
  return transition(
    ctx,
    "requireInput",
    async () =>
      (
        await ctx.runner.run(
          "requireInput",
          ctx.plans.requireInput({ ...fenced(taskId, scope, ctx.now()), ...own }),
        )
      )[0],
    taskId,
    scope,
    "input_requested",
    (task) => assertFreshInputKeys(task, requests),
  );
}

export async function setStatusMessage(
  ctx: StoreContext,
  taskId: string,
  scope: OwnerScope,
  statusMessage: string | null,
): Promise<TaskRecord> {
  assertStorable("the status message", statusMessage);
  return transition(
    ctx,
    "setStatusMessage",
    async () =>
      (
        await ctx.runner.run(
          "setStatusMessage",
          ctx.plans.setStatusMessage({
            ...fenced(taskId, scope, ctx.now()),
            message: statusMessage,
          }),
        )
      )[0],
    taskId,
    scope,
    "status_message",
  );
}

export async function requestCancel(
  ctx: StoreContext,
  taskId: string,
  scope: OwnerScope,
): Promise<TaskRecord> {
  const statement = ctx.plans.requestCancel(byId(taskId, scope, ctx.now()));
  const row = (await ctx.runner.run("requestCancel", statement))[0];
  if (row === undefined) throw taskErrors.notFound(taskId);
  const record = toRecord(row);
  if (row.changed === true) return ctx.relay.changed(record, "cancel_requested");
  // Lost a race with a concurrent writer: the snapshot may predate its change.
  if (ACTIVE_STATUSES.includes(record.status) && record.cancelRequestedAt === null) {
    return get(ctx, taskId, scope);
  }
  return record;
}

export async function submitInput(
  ctx: StoreContext,
  taskId: string,
  scope: OwnerScope,
  responses: Readonly<Record<string, InputResponse>>,
): Promise<SubmitInputResult> {
  assertStorable("the input responses", responses);
  const keys = Object.keys(responses ?? {});
  // Each answer's bytes, measured here as core measures them (the statement adds those of
  // the keys it accepts).
  const sizes: Record<string, number> = {};
  for (const key of keys) sizes[key] = payloadBytes(responses[key]);
  const statement = ctx.plans.submitInput({
    ...byId(taskId, scope, ctx.now()),
    responses: toJson(responses ?? {}, "input responses"),
    keys: JSON.stringify(keys),
    sizes: JSON.stringify(sizes),
  });
  const maxBytes = ctx.settings.bounds.maxBytesPerOwner;
  for (let attempt = 0; attempt < MAX_WRITE_TRIES; attempt++) {
    const row = (await ctx.runner.run("submitInput", statement))[0];
    if (row === undefined) throw taskErrors.notFound(taskId);
    const task = toRecord(row);
    if (row.over_quota === true && maxBytes !== null) {
      // The counters include the owner's expired rows not yet removed: remove them (a
      // bounded batch) and try again; refused only when there were none.
      if ((await reclaim(ctx, ownerKey(task.owner))) > 0) continue;
      throw taskErrors.storeFull("maxBytesPerOwner", maxBytes);
    }
    if (row.changed !== true) return { task, acceptedKeys: [] };
    ctx.relay.changed(task, "input_submitted");
    return { task, acceptedKeys: row.accepted as string[] };
  }
  throw taskErrors.storeUnavailable("submitInput kept racing with concurrent writers; try again");
}

export async function takeInputResponses(
  ctx: StoreContext,
  taskId: string,
  scope: OwnerScope,
): Promise<TakeInputResult> {
  const statement = ctx.plans.takeInput(fenced(taskId, scope, ctx.now()));
  const row = (await ctx.runner.run("takeInputResponses", statement))[0];
  if (row === undefined) throw taskErrors.notFound(taskId);
  const task = toRecord(row);
  if (row.changed !== true) {
    // Nothing drained: nothing was there, or the fence did not hold.
    assertFence(task, scope.fence);
    return { task: { ...task, inputResponses: {} }, responses: {} };
  }
  ctx.relay.changed(task, "input_taken");
  return { task, responses: row.taken as Record<string, InputResponse> };
}

/** A terminal transition, sent with the others of this moment in one statement. */
async function settle(
  ctx: StoreContext,
  intent: Intent,
  taskId: string,
  scope: OwnerScope,
  outcome: Outcome,
): Promise<TaskRecord> {
  const row = {
    taskId: storableId(taskId),
    ownerKey: storedKey(scope),
    includeUnowned: scope.includeUnowned,
    fence: scope.fence ?? null,
    outcome,
  };
  return transition(
    ctx,
    intent,
    () => ctx.settles.submit({ intent, row }),
    taskId,
    scope,
    "status_changed",
  );
}

/**
 * One conditional write; when it matches nothing, one read decides between
 * `not_found_or_unauthorized`, `invalid_transition` and `lease_lost` (or the intent's own
 * check), and when the task is in a state the write accepts after all (it changed in
 * between), the write is tried again. `kind` null: the caller announces the change itself.
 */
export async function transition(
  ctx: StoreContext,
  intent: Intent,
  write: () => Promise<Row | undefined>,
  taskId: string,
  scope: OwnerScope,
  kind: TaskChangeKind | null,
  check?: (task: TaskRecord) => void,
): Promise<TaskRecord> {
  for (let attempt = 0; attempt < 3; attempt++) {
    const row = await write();
    if (row !== undefined) {
      return kind === null ? toRecord(row) : ctx.relay.changed(toRecord(row), kind);
    }
    const task = await explainMiss(ctx, taskId, scope, intent);
    check?.(task);
  }
  throw taskErrors.storeUnavailable(`${intent} kept racing with concurrent writers; try again`);
}

/**
 * Throws the error a write that matched nothing deserves, or returns the task as it is:
 * `not_found_or_unauthorized`, else `invalid_transition`, else `lease_lost` when the write
 * carried the fence of a run that no longer holds the task.
 */
async function explainMiss(
  ctx: StoreContext,
  taskId: string,
  scope: OwnerScope,
  intent: Intent,
): Promise<TaskRecord> {
  const task = await get(ctx, taskId, scope);
  assertIntentAllowed(task, intent);
  assertFence(task, scope.fence);
  return task;
}
