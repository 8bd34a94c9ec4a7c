import { describe, expect, it } from "vitest";
import { DEFAULT_EXECUTION_POLICY, type TaskExecution } from "../src/index.js";
import {
  attemptsAfterRequeue,
  deadlineExceededError,
  HANDED_BACK_MESSAGE,
  MAX_LEASE_HOLDER_LENGTH,
  nextAttempt,
  retryBackoffOf,
  validateClaim,
  validateLeaseHolder,
  WORKER_LOST_ERROR,
} from "../src/store-api.js";
import { INTERNAL_ERROR_CODE } from "../src/task.js";

/** The execution state of a task on its `attempt`-th run. */
function execution(attempt: number, policy: Partial<TaskExecution> = {}): TaskExecution {
  return {
    ...DEFAULT_EXECUTION_POLICY,
    attempt,
    holder: "node-a",
    fencingToken: attempt,
    leaseExpiresAt: 1000,
    availableAt: null,
    ...policy,
  };
}

const ERROR = { code: 7, message: "boom" };

describe("nextAttempt", () => {
  it("retries a lost run after the backoff while attempts remain, then fails it Worker lost", () => {
    expect(nextAttempt(execution(1, { maxAttempts: 2, backoffMs: 30 }), { kind: "lost" })).toEqual({
      retry: true,
      countAttempt: true,
      backoffMs: 30,
      statusMessage: "Retrying after the worker was lost (attempt 2 of 2)",
    });
    expect(nextAttempt(execution(2, { maxAttempts: 2 }), { kind: "lost" })).toEqual({
      retry: false,
      error: WORKER_LOST_ERROR,
    });
  });

  it("retries a run past its deadline while attempts remain, then fails it with the deadline", () => {
    const policy = { maxAttempts: 3, backoffMs: 5, deadlineMs: 40 };
    expect(nextAttempt(execution(2, policy), { kind: "expired" })).toMatchObject({
      retry: true,
      statusMessage: "Retrying after the deadline was exceeded (attempt 3 of 3)",
    });
    expect(nextAttempt(execution(3, policy), { kind: "expired" })).toEqual({
      retry: false,
      error: deadlineExceededError(40),
    });
    expect(deadlineExceededError(40)).toEqual({
      code: INTERNAL_ERROR_CODE,
      message: "Deadline exceeded: a run may take at most 40 ms",
    });
  });

  it("retries a handler's error only when the policy retries errors and attempts remain", () => {
    const failed = { kind: "failed", error: ERROR } as const;
    expect(nextAttempt(execution(1, { maxAttempts: 3 }), failed)).toEqual({
      retry: false,
      error: ERROR,
    });
    expect(nextAttempt(execution(1, { maxAttempts: 3, retryOnError: true }), failed)).toEqual({
      retry: true,
      countAttempt: true,
      backoffMs: DEFAULT_EXECUTION_POLICY.backoffMs,
      statusMessage: "Retrying after an error (boom) (attempt 2 of 3)",
    });
    expect(nextAttempt(execution(3, { maxAttempts: 3, retryOnError: true }), failed)).toEqual({
      retry: false,
      error: ERROR,
    });
  });

  it("hands a run back at once without counting it, whatever attempts remain", () => {
    const next = nextAttempt(execution(1, { backoffMs: 60_000 }), { kind: "handed_back" });
    expect(next).toEqual({
      retry: true,
      countAttempt: false,
      backoffMs: 0,
      statusMessage: HANDED_BACK_MESSAGE,
    });
    expect(attemptsAfterRequeue(1, next)).toBe(0);
    expect(attemptsAfterRequeue(0, next)).toBe(0);
  });

  it("requeues a run that asked for another attempt after the backoff, counted", () => {
    const next = nextAttempt(execution(1, { maxAttempts: 2, backoffMs: 9 }), {
      kind: "retry_requested",
      statusMessage: "once more",
    });
    expect(next).toEqual({
      retry: true,
      countAttempt: true,
      backoffMs: 9,
      statusMessage: "once more",
    });
    expect(attemptsAfterRequeue(1, next)).toBe(1);
  });
});

describe("retryBackoffOf", () => {
  it("is the backoff of a task queued to wait one out, else null", () => {
    const waiting = execution(1, { holder: null, availableAt: 2000, backoffMs: 70 });
    expect(retryBackoffOf({ status: "working", execution: waiting })).toBe(70);
    expect(retryBackoffOf({ status: "cancelled", execution: waiting })).toBeNull();
    expect(
      retryBackoffOf({ status: "working", execution: { ...waiting, availableAt: null } }),
    ).toBeNull();
    expect(retryBackoffOf({ status: "working", execution: execution(1) })).toBeNull();
  });
});

describe("lease arguments", () => {
  it("a holder is a non-empty string of at most MAX_LEASE_HOLDER_LENGTH characters", () => {
    expect(() => validateLeaseHolder("w".repeat(MAX_LEASE_HOLDER_LENGTH))).not.toThrow();
    for (const bad of ["", "w".repeat(MAX_LEASE_HOLDER_LENGTH + 1), 42, undefined]) {
      expect(() => validateLeaseHolder(bad, "lease.holder")).toThrow(
        `lease.holder must be a non-empty string of at most ${MAX_LEASE_HOLDER_LENGTH} characters`,
      );
    }
  });

  it("a claim checks its holder, its lease and its owner limits", () => {
    expect(() => validateClaim("node-a", { leaseMs: 1000, maxRunningPerOwner: 2 })).not.toThrow();
    expect(() => validateClaim("", { leaseMs: 1000 })).toThrow(/holder must be/);
    expect(() => validateClaim("node-a", { leaseMs: 0 })).toThrow(/leaseMs must be/);
    expect(() => validateClaim("node-a", { leaseMs: 10, maxWaitingPerOwner: -1 })).toThrow(
      /maxWaitingPerOwner must be/,
    );
  });
});
