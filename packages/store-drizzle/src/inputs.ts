import type { TaskRecord } from "@mcp-tasks/core";
import {
  holdsUnstorableText,
  type OwnerScope,
  taskErrors,
  UNOWNED_KEY,
} from "@mcp-tasks/core/store";
import type { ById, Fenced } from "./plans/fragments.js";

/*
 * The checks and encodings of the arguments of one call, before any statement: what a value
 * must be to be stored or sent, and how it goes into a plan's input.
 */

/** The largest value of an `integer` column (the backoff). */
export const MAX_INT4 = 2_147_483_647;

/** `value` as JSON text; `invalid_task` when it is not JSON. */
export function toJson(value: unknown, what: string): string {
  try {
    const text = JSON.stringify(value);
    if (text === undefined) throw new TypeError("not JSON");
    return text;
  } catch (error) {
    throw taskErrors.invalidTask(`${what} is not JSON-serialisable (${(error as Error).message})`);
  }
}

/**
 * The owner key sent to PostgreSQL. A key holding U+0000 (which no text column holds, and
 * core's rule refuses at creation) owns no task: it goes as a key no owner has (real keys
 * start with a digit, `~` or nothing), so the caller still sees what the memory store
 * shows it, the unowned tasks its scope includes, and the database sees no bad text.
 */
export function storedKey(scope: OwnerScope): string {
  return holdsUnstorableText(scope.ownerKey) ? "!unstorable" : scope.ownerKey;
}

/** A task id holding U+0000 names no task (none was ever created with one). */
export function storableId(taskId: string): string {
  const id = String(taskId);
  if (holdsUnstorableText(id)) throw taskErrors.notFound(id);
  return id;
}

/** The input of a by-id statement (see `plans/fragments.ts`). */
export function byId(taskId: string, scope: OwnerScope, now: number | null): ById {
  return {
    id: storableId(taskId),
    ownerKey: storedKey(scope),
    includeUnowned: scope.includeUnowned,
    now,
  };
}

/** The input of a run's write: {@link byId}'s, then the fence, or nulls. */
export function fenced(taskId: string, scope: OwnerScope, now: number | null): Fenced {
  const fence = scope.fence;
  return {
    ...byId(taskId, scope, now),
    holder: fence?.holder ?? null,
    fencingToken: fence?.fencingToken ?? null,
  };
}

/** Whether a listing in `scope` merges in the unowned tasks (a second ordered scan). */
export function alsoUnowned(scope: OwnerScope): boolean {
  return scope.includeUnowned && scope.ownerKey !== UNOWNED_KEY;
}

/** A limit option: a whole number, 0 for a bad one, `fallback` when absent. */
export function positiveLimit(limit: number | undefined, fallback: number): number {
  if (limit === undefined) return fallback;
  if (!Number.isFinite(limit) || limit <= 0) return 0;
  return Math.floor(limit);
}

/** Lease calls name the run they are about: without a fence there is none. */
export function requireFence(scope: OwnerScope, operation: string): void {
  const fence = scope.fence;
  if (
    fence === undefined ||
    typeof fence.holder !== "string" ||
    !Number.isSafeInteger(fence.fencingToken)
  ) {
    throw taskErrors.invalidTask(`${operation} needs the run's fence in scope.fence`);
  }
}

/** A record with an empty input ledger, to check a batch's shape on its own. */
export const NO_INPUT = {
  taskId: "",
  inputRequests: {},
  inputResponses: {},
  answeredInputKeys: [],
} as unknown as TaskRecord;
