import { taskErrors } from "./errors.js";
import type { TtlAnchor } from "./task.js";

/** How long finished tasks are kept. */
export interface TtlPolicy {
  /** Used when the client asks for none; `null` keeps tasks until deleted. */
  readonly defaultTtlMs: number | null;
  /** The largest ttl granted; `null` for no maximum. Unlimited requests get the maximum. */
  readonly maxTtlMs: number | null;
  /** What to do with a request above the maximum: lower it, or refuse the task. */
  readonly onOutOfRange: "clamp" | "reject";
  /** When the retention clock starts; see {@link TtlAnchor}. */
  readonly anchor: TtlAnchor;
}

/** One hour from creation, at most thirty days, clamped: the spec's reading. */
export const DEFAULT_TTL_POLICY: TtlPolicy = Object.freeze({
  defaultTtlMs: 60 * 60 * 1000,
  maxTtlMs: 30 * 24 * 60 * 60 * 1000,
  onOutOfRange: "clamp",
  anchor: "creation",
});

function checkMs(name: string, value: number | null): void {
  if (value !== null && !(Number.isSafeInteger(value) && value > 0)) {
    throw new RangeError(`${name} must be a positive integer number of ms, or null`);
  }
}

/** Validates a policy, filling defaults; throws `RangeError` for nonsense settings. */
export function ttlPolicy(options: Partial<TtlPolicy> = {}): TtlPolicy {
  const policy = { ...DEFAULT_TTL_POLICY, ...options };
  checkMs("defaultTtlMs", policy.defaultTtlMs);
  checkMs("maxTtlMs", policy.maxTtlMs);
  if (
    policy.maxTtlMs !== null &&
    (policy.defaultTtlMs === null || policy.defaultTtlMs > policy.maxTtlMs)
  ) {
    throw new RangeError("defaultTtlMs must be set and at most maxTtlMs when maxTtlMs is set");
  }
  return Object.freeze(policy);
}

/**
 * The ttl actually granted for a requested one (`undefined`: the client asked for none;
 * `null`: the client asked for unlimited). Throws `ttl_out_of_range` under `reject`.
 */
export function resolveTtl(policy: TtlPolicy, requested: number | null | undefined): number | null {
  if (requested === undefined) return policy.defaultTtlMs;
  if (requested !== null && !(Number.isSafeInteger(requested) && requested > 0)) {
    throw taskErrors.invalidTask("ttl must be a positive integer number of ms");
  }
  const max = policy.maxTtlMs;
  if (max === null) return requested;
  if (requested === null || requested > max) {
    if (policy.onOutOfRange === "reject")
      throw taskErrors.ttlOutOfRange(requested ?? Infinity, max);
    return max;
  }
  return requested;
}
