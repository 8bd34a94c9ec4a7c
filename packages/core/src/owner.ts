import { taskErrors } from "./errors.js";
import type { Fence } from "./task.js";
/**
 * The owner of a task: who may see and change it. Each part is optional, and owners are
 * compared by exact equality of all three parts, so `alice@acme` for audience `x` is a
 * different owner from `alice@acme` with no audience.
 */
export interface Owner {
  readonly principalId: string | null;
  readonly tenantId: string | null;
  readonly audience: string | null;
}

/** The caller with no identity. Tasks it creates are unowned. */
export const ANONYMOUS: Owner = Object.freeze({
  principalId: null,
  tenantId: null,
  audience: null,
});

/** Builds an owner from optional parts; missing parts become `null`. */
export function owner(parts: {
  principalId?: string | null;
  tenantId?: string | null;
  audience?: string | null;
}): Owner {
  return Object.freeze({
    principalId: parts.principalId ?? null,
    tenantId: parts.tenantId ?? null,
    audience: parts.audience ?? null,
  });
}

/** True when no part of the owner is set: the caller is anonymous, the task unowned. */
export function isAnonymous(o: Owner): boolean {
  return o.principalId === null && o.tenantId === null && o.audience === null;
}

/** The key of unowned tasks. */
export const UNOWNED_KEY = "";

function part(value: string | null): string {
  // Length-prefixed so that no two owners share a key, whatever their parts contain.
  return value === null ? "~" : `${value.length}:${value}`;
}

/**
 * A canonical string for an owner: equal keys if and only if equal owners. Stores index
 * and compare by it; the anonymous owner's key is the empty string.
 */
export function ownerKey(o: Owner): string {
  if (isAnonymous(o)) return UNOWNED_KEY;
  return `${part(o.principalId)}|${part(o.tenantId)}|${part(o.audience)}`;
}

/** True when both owners are the same owner. */
export function sameOwner(a: Owner, b: Owner): boolean {
  return a.principalId === b.principalId && a.tenantId === b.tenantId && a.audience === b.audience;
}

/** Who-sees-what rules shared by every store. */
export interface OwnerPolicy {
  /**
   * When on, unowned tasks are visible to nobody and anonymous callers can create no task.
   * When off (the default), unowned tasks are visible to every caller.
   */
  readonly requireOwner: boolean;
}

/**
 * What a store call may touch: tasks owned by exactly `owner`, plus unowned tasks when
 * `includeUnowned` is set. Built by {@link ownerScope}; stores only apply it.
 */
export interface OwnerScope {
  readonly owner: Owner;
  /** `ownerKey(owner)`, computed once per call rather than per row. */
  readonly ownerKey: string;
  readonly includeUnowned: boolean;
  /**
   * Set on the writes of one run of the task (status message, input request, outcome,
   * lease): the store applies the write only while that run still holds the task, in the
   * same statement, and refuses it with `lease_lost` otherwise.
   */
  readonly fence?: Fence;
}

/**
 * The policy table, default-closed:
 *
 * | caller \ task     | owned by caller | owned by another | unowned                  |
 * |-------------------|-----------------|------------------|--------------------------|
 * | owner             | visible         | hidden           | visible unless requireOwner |
 * | anonymous         | —               | hidden           | visible unless requireOwner |
 *
 * Returns `null` when the caller may see nothing at all (anonymous under `requireOwner`).
 */
export function ownerScope(caller: Owner, policy: OwnerPolicy): OwnerScope | null {
  const key = ownerKey(caller);
  if (key === UNOWNED_KEY && policy.requireOwner) return null;
  return { owner: caller, ownerKey: key, includeUnowned: !policy.requireOwner };
}

/**
 * `scope` for the writes of one run of a task: the same scope, fenced by the run's `fence`.
 * Field by field, not `{ ...scope, fence }`: see "Hot paths" in docs/architecture.md.
 */
export function fencedScope(scope: OwnerScope, fence: Fence): OwnerScope {
  return {
    owner: scope.owner,
    ownerKey: scope.ownerKey,
    includeUnowned: scope.includeUnowned,
    fence,
  };
}

/** True when a task with owner key `taskOwnerKey` is inside the scope. */
export function scopeAllowsKey(scope: OwnerScope, taskOwnerKey: string): boolean {
  return taskOwnerKey === scope.ownerKey || (scope.includeUnowned && taskOwnerKey === UNOWNED_KEY);
}

/** True when a task owned by `taskOwner` is inside the scope. */
export function scopeAllows(scope: OwnerScope, taskOwner: Owner): boolean {
  return scopeAllowsKey(scope, ownerKey(taskOwner));
}

/**
 * `record` when it is task `taskId` and `scope` may see it; else `not_found_or_unauthorized`.
 * Defence in depth: the store filtered by owner already, but a custom store may be buggy.
 */
export function verifiedRecord<R extends { readonly taskId: string; readonly owner: Owner }>(
  scope: OwnerScope,
  taskId: string,
  record: R,
): R {
  if (record.taskId !== taskId || !scopeAllows(scope, record.owner)) {
    throw taskErrors.notFound(taskId);
  }
  return record;
}
