import type { TaskPage, TaskRecord, TaskStatus } from "@mcp-tasks/core";
import {
  decodeSequenceCursor,
  encodeCursor,
  type ListQuery,
  type NewestQuery,
  type OwnerScope,
  UNOWNED_KEY,
} from "@mcp-tasks/core/store";
import { pageLimit } from "./options.js";
import { lastBefore } from "./owner-list.js";
import type { Slot } from "./slot.js";
import type { StoreState } from "./store-state.js";

/*
 * Listings walk the owners' creation-ordered lists from the cursor (a creation sequence),
 * so a page costs O(page) plus the removed, expired or filtered tasks skipped on the way.
 * The expiry test is core's `isExpired` written out, as on the lookups' hot path (see
 * `visibleSlot`).
 */

/** The caller's tasks (and the unowned ones when its scope includes them), oldest first. */
export function listOldestFirst(state: StoreState, scope: OwnerScope, query: ListQuery): TaskPage {
  const after = query.cursor === undefined ? 0 : decodeSequenceCursor(query.cursor);
  const limit = pageLimit(query.limit, state);
  const wanted: ReadonlySet<TaskStatus> | null =
    query.statuses && query.statuses.length > 0 ? new Set(query.statuses) : null;
  const own = state.owners.get(scope.ownerKey);
  const unowned =
    scope.includeUnowned && scope.ownerKey !== UNOWNED_KEY
      ? state.owners.get(UNOWNED_KEY)
      : undefined;
  const now = state.clock.now();
  const out: TaskRecord[] = [];
  // Merge the caller's list with the unowned list by creation sequence.
  const a = own?.slots ?? [];
  const b = unowned?.slots ?? [];
  let i = own ? own.firstAfter(after) : 0;
  let j = unowned ? unowned.firstAfter(after) : 0;
  let lastSeq = after;
  while (i < a.length || j < b.length) {
    const takeA = j >= b.length || (i < a.length && a[i]!.seq < b[j]!.seq);
    const slot = takeA ? a[i++]! : b[j++]!;
    if (slot.deleted) continue;
    const r = slot.record;
    if (r.expiresAt !== null && r.expiresAt <= now) continue;
    if (wanted !== null && !wanted.has(r.status)) continue;
    if (out.length === limit) {
      // One more match exists: hand out a cursor at the last returned task.
      return { tasks: out, nextCursor: encodeCursor(lastSeq) };
    }
    out.push(r);
    lastSeq = slot.seq;
  }
  return { tasks: out };
}

/** The caller's tasks (and the unowned ones when its scope includes them), newest first. */
export function listNewestFirst(
  state: StoreState,
  scope: OwnerScope,
  query: NewestQuery,
): TaskPage {
  const own = state.owners.get(scope.ownerKey)?.slots ?? [];
  const unowned =
    scope.includeUnowned && scope.ownerKey !== UNOWNED_KEY
      ? (state.owners.get(UNOWNED_KEY)?.slots ?? [])
      : [];
  return newestOf(state, query, own, unowned);
}

/** Every owner's tasks, newest first: the operator's view. */
export function listNewestOfEveryone(state: StoreState, query: NewestQuery): TaskPage {
  return newestOf(state, query, state.everyone.slots, []);
}

/** Walks two creation-ordered lists backwards from the cursor, merged by sequence. */
function newestOf(
  state: StoreState,
  query: NewestQuery,
  a: readonly Slot[],
  b: readonly Slot[],
): TaskPage {
  const before =
    query.cursor === undefined ? Number.POSITIVE_INFINITY : decodeSequenceCursor(query.cursor);
  const limit = pageLimit(query.limit, state);
  const statuses = query.statuses && query.statuses.length > 0 ? new Set(query.statuses) : null;
  const tools = query.toolNames && query.toolNames.length > 0 ? new Set(query.toolNames) : null;
  const now = state.clock.now();
  const out: TaskRecord[] = [];
  let i = lastBefore(a, before);
  let j = lastBefore(b, before);
  let lastSeq = before;
  while (i >= 0 || j >= 0) {
    const takeA = j < 0 || (i >= 0 && a[i]!.seq > b[j]!.seq);
    const slot = takeA ? a[i--]! : b[j--]!;
    if (slot.deleted) continue;
    const r = slot.record;
    if (r.expiresAt !== null && r.expiresAt <= now) continue;
    if (statuses !== null && !statuses.has(r.status)) continue;
    if (tools !== null && !tools.has(r.request.toolName)) continue;
    if (out.length === limit) return { tasks: out, nextCursor: encodeCursor(lastSeq) };
    out.push(r);
    lastSeq = slot.seq;
  }
  return { tasks: out };
}
