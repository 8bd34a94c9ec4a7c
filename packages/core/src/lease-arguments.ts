/**
 * The bounds of a worker's lease arguments, checked in one place so that every store
 * accepts and refuses the same ones (a store's own limits, e.g. a column's width, must not
 * make one store refuse what another took).
 */

import { taskErrors } from "./errors.js";
import { type OwnerLimits, validateOwnerLimits } from "./fairness.js";

/**
 * Most characters of a lease holder (a worker's name): it is stored with every claimed task
 * and compared on every write of its runs, so it is kept short.
 */
export const MAX_LEASE_HOLDER_LENGTH = 256;

/**
 * Checks a worker's name, given as `what` (`holder`, `lease.holder`): a non-empty string
 * of at most {@link MAX_LEASE_HOLDER_LENGTH} characters; throws `invalid_task`.
 */
export function validateLeaseHolder(holder: unknown, what = "holder"): void {
  if (
    typeof holder !== "string" ||
    holder.length === 0 ||
    holder.length > MAX_LEASE_HOLDER_LENGTH
  ) {
    throw taskErrors.invalidTask(
      `${what} must be a non-empty string of at most ${MAX_LEASE_HOLDER_LENGTH} characters`,
    );
  }
}

/** Checks a lease's length (a claim's or a renewal's): a positive integer; throws `invalid_task`. */
export function validateLeaseMs(leaseMs: unknown): void {
  if (!(Number.isSafeInteger(leaseMs) && (leaseMs as number) > 0)) {
    throw taskErrors.invalidTask("leaseMs must be a positive integer");
  }
}

/**
 * Checks the arguments of `TaskQueueStore.claim`: the holder, the lease and the per-owner
 * limits; throws `invalid_task`. Every store calls it before it claims anything.
 */
export function validateClaim(holder: unknown, options: { leaseMs: unknown } & OwnerLimits): void {
  validateLeaseHolder(holder, "holder");
  validateLeaseMs(options.leaseMs);
  validateOwnerLimits(options);
}
