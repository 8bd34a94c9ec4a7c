/** The quota counters of a store, and their audit against a recount. */

/** One owner's usage as a store's quota counters hold it (or a recount finds it). */
export interface UsageCounts {
  /** Tasks stored, expired ones not yet removed included. */
  readonly tasks: number;
  /** Their payload bytes (core's `taskPayloadBytes`); 0 when the store counts none. */
  readonly bytes: number;
}

/** What a store's quota counters hold: the total and each owner's (by owner key). */
export interface UsageSnapshot {
  /** Tasks stored in all. */
  readonly tasks: number;
  /** Each owner that holds something, by `ownerKey`; owners holding nothing are left out. */
  readonly owners: Readonly<Record<string, UsageCounts>>;
}

/**
 * A store's quota counters next to the same numbers counted from its tasks one by one:
 * they must agree. The counters let a store check its quotas at a cost that does not grow
 * with the number of tasks; the recount is the slow truth they are checked against (see the
 * contract suite's `auditUsage` hook).
 */
export interface UsageAudit {
  readonly counters: UsageSnapshot;
  readonly recount: UsageSnapshot;
}
