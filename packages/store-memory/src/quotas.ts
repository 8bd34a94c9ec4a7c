import type { InputResponse } from "@mcp-tasks/core";
import {
  payloadBytes,
  taskErrors,
  taskPayloadBytes,
  type UsageAudit,
  type UsageCounts,
} from "@mcp-tasks/core/store";
import type { OwnerList } from "./owner-list.js";
import type { Slot } from "./slot.js";
import type { StoreState } from "./store-state.js";
import { sweepExpired } from "./task-removal.js";
import { addBytes } from "./task-table.js";

/*
 * The store's bounds: tasks held, tasks per owner, payload bytes per owner. The counters
 * live on the owner lists (see `TaskTable`), so each check costs O(1); expired tasks do not
 * count, so a check that fails sweeps them and looks again before refusing.
 */

/**
 * Refuses a new task of `bytes` payload bytes for the owner `key` with `store_full` when a
 * bound is reached. Returns the owner's list (`undefined` when it holds nothing), which the
 * insert then needs not look up again.
 */
export function assertRoomForTask(
  state: StoreState,
  key: string,
  bytes: number,
): OwnerList | undefined {
  let list = state.owners.get(key);
  if (
    state.tasks.size >= state.maxTasks ||
    (list?.live ?? 0) >= state.maxTasksPerOwner ||
    (list?.bytes ?? 0) + bytes > state.maxBytesPerOwner
  ) {
    // Expired tasks do not count: sweep them, then look again.
    sweepExpired(state, Number.POSITIVE_INFINITY);
    list = state.owners.get(key);
    if (state.tasks.size >= state.maxTasks) {
      throw taskErrors.storeFull("maxTasks", state.maxTasks);
    }
    if ((list?.live ?? 0) >= state.maxTasksPerOwner) {
      throw taskErrors.storeFull("maxTasksPerOwner", state.maxTasksPerOwner);
    }
    if ((list?.bytes ?? 0) + bytes > state.maxBytesPerOwner) {
      throw taskErrors.storeFull("maxBytesPerOwner", state.maxBytesPerOwner);
    }
  }
  return list;
}

/**
 * Counts the accepted answers of `responses` against the task's owner: they are kept for
 * the task's lifetime. Refuses them all with `store_full` past the owner's byte quota.
 */
export function chargeAnswers(
  state: StoreState,
  slot: Slot,
  responses: Readonly<Record<string, InputResponse>>,
  acceptedKeys: readonly string[],
): void {
  if (!state.countBytes) return;
  let added = 0;
  for (const key of acceptedKeys) added += payloadBytes(responses[key]);
  assertBytesRoom(state, slot.ownerKey, added);
  addBytes(state, slot, added);
}

/** Refuses `added` payload bytes for the owner past its quota (after sweeping expired tasks). */
function assertBytesRoom(state: StoreState, ownerKey: string, added: number): void {
  if ((state.owners.get(ownerKey)?.bytes ?? 0) + added <= state.maxBytesPerOwner) return;
  sweepExpired(state, Number.POSITIVE_INFINITY);
  if ((state.owners.get(ownerKey)?.bytes ?? 0) + added > state.maxBytesPerOwner) {
    throw taskErrors.storeFull("maxBytesPerOwner", state.maxBytesPerOwner);
  }
}

/**
 * The quota counters next to the same numbers counted task by task. Both include expired
 * tasks not yet swept. O(n): for tests and audits.
 */
export function auditUsage(state: StoreState): UsageAudit {
  const counted: Record<string, UsageCounts> = {};
  for (const [key, list] of state.owners) {
    if (list.live > 0 || list.bytes !== 0) counted[key] = { tasks: list.live, bytes: list.bytes };
  }
  const recounted: Record<string, { tasks: number; bytes: number }> = {};
  for (const slot of state.tasks.values()) {
    const entry = recounted[slot.ownerKey] ?? { tasks: 0, bytes: 0 };
    recounted[slot.ownerKey] = entry;
    entry.tasks += 1;
    if (state.countBytes) entry.bytes += taskPayloadBytes(slot.record);
  }
  return {
    counters: { tasks: state.tasks.size, owners: counted },
    recount: {
      tasks: Object.values(recounted).reduce((sum, o) => sum + o.tasks, 0),
      owners: recounted,
    },
  };
}
