import { describe, expect, it } from "vitest";
import {
  ANONYMOUS,
  DEFAULT_EXECUTION_POLICY,
  isTaskError,
  isTerminal,
  TASK_STATUSES,
  type TaskRecord,
  type TaskStatus,
} from "../src/index.js";
import {
  assertFence,
  canTransition,
  claimTask,
  completeTask,
  executionPolicy,
  failTask,
  INTENT_FROM,
  isClaimable,
  isExpired,
  isOrphaned,
  markTaskCancelled,
  newTaskRecord,
  recoverOrphan,
  renewTaskLease,
  requestTaskCancel,
  requeueTask,
  requireTaskInput,
  retryingMessage,
  setTaskStatusMessage,
  submitTaskInput,
  TRANSITIONS,
  takeTaskInputResponses,
  validateNewTask,
  WORKER_LOST_ERROR,
} from "../src/store-api.js";

const NEW = {
  taskId: "t1",
  era: "2026-07-28" as const,
  request: { toolName: "x", arguments: {} },
  ttlMs: 1000,
  ttlAnchor: "creation" as const,
  pollIntervalMs: null,
};

describe("transition table", () => {
  const expected: Record<TaskStatus, TaskStatus[]> = {
    working: ["input_required", "completed", "failed", "cancelled"],
    input_required: ["working", "completed", "failed", "cancelled"],
    completed: [],
    failed: [],
    cancelled: [],
  };

  for (const from of TASK_STATUSES) {
    for (const to of TASK_STATUSES) {
      const allowed = expected[from].includes(to);
      it(`${from} → ${to} is ${allowed ? "allowed" : "forbidden"}`, () => {
        expect(canTransition(from, to)).toBe(allowed);
      });
    }
  }

  it("terminal states are exactly those with no way out", () => {
    for (const s of TASK_STATUSES) expect(isTerminal(s)).toBe(TRANSITIONS[s].length === 0);
  });
});

describe("pure operations", () => {
  it("never mutate the record they are given", () => {
    const t = Object.freeze(newTaskRecord(NEW, ANONYMOUS, 0));
    const asked = requireTaskInput(t, 1, { q: { method: "elicitation/create" } });
    expect(t.status).toBe("working");
    const answered = submitTaskInput(asked, 2, { q: { ok: true } });
    expect(asked.inputRequests).toEqual({ q: { method: "elicitation/create" } });
    expect(answered.task.status).toBe("working");
    completeTask(answered.task, 3, {});
    expect(answered.task.status).toBe("working");
  });

  it("fail defaults the status message to the error message", () => {
    const t = newTaskRecord(NEW, ANONYMOUS, 0);
    expect(failTask(t, 1, { code: -1, message: "disk full" }).statusMessage).toBe("disk full");
    expect(failTask(t, 1, { code: -1, message: "disk full" }, null).statusMessage).toBeNull();
  });

  it("requestCancel returns the very same record when nothing changes", () => {
    const t = requestTaskCancel(newTaskRecord(NEW, ANONYMOUS, 0), 5);
    expect(requestTaskCancel(t, 9)).toBe(t);
  });

  it("isExpired is false for running tasks and true at the expiry instant", () => {
    expect(isExpired({ expiresAt: null }, Number.MAX_SAFE_INTEGER)).toBe(false);
    expect(isExpired({ expiresAt: 10 }, 9)).toBe(false);
    expect(isExpired({ expiresAt: 10 }, 10)).toBe(true);
  });
});

/** The error code `fn` throws, or `null` when it does not throw. */
function codeOf(fn: () => unknown): string | null {
  try {
    fn();
    return null;
  } catch (error) {
    if (!isTaskError(error)) throw error;
    return error.code;
  }
}

describe("execution policy", () => {
  it("defaults to one run, a 1 s backoff, no retry on error and no deadline", () => {
    expect(executionPolicy()).toEqual(DEFAULT_EXECUTION_POLICY);
    expect(DEFAULT_EXECUTION_POLICY).toEqual({
      maxAttempts: 1,
      backoffMs: 1000,
      retryOnError: false,
      deadlineMs: null,
    });
    expect(Object.isFrozen(DEFAULT_EXECUTION_POLICY)).toBe(true);
  });

  it("merges a partial policy over the defaults and keeps only policy fields", () => {
    const merged = executionPolicy({ maxAttempts: 3, deadlineMs: 5000 });
    expect(merged).toEqual({
      maxAttempts: 3,
      backoffMs: 1000,
      retryOnError: false,
      deadlineMs: 5000,
    });
    const extra = { backoffMs: 0, attempt: 7 } as unknown as Partial<typeof merged>;
    expect(Object.keys(executionPolicy(extra)).sort()).toEqual(
      ["backoffMs", "deadlineMs", "maxAttempts", "retryOnError"].sort(),
    );
  });

  const bad: [string, object][] = [
    ["maxAttempts 0", { maxAttempts: 0 }],
    ["maxAttempts 101", { maxAttempts: 101 }],
    ["fractional maxAttempts", { maxAttempts: 2.5 }],
    ["negative backoffMs", { backoffMs: -1 }],
    ["fractional backoffMs", { backoffMs: 0.5 }],
    ["deadlineMs 0", { deadlineMs: 0 }],
    ["NaN deadlineMs", { deadlineMs: Number.NaN }],
  ];
  for (const [what, policy] of bad) {
    it(`refuses ${what} with invalid_task`, () => {
      expect(codeOf(() => executionPolicy(policy))).toBe("invalid_task");
      expect(codeOf(() => validateNewTask({ ...NEW, execution: policy }))).toBe("invalid_task");
    });
  }

  it("accepts the bounds: 1 and 100 attempts, a zero backoff", () => {
    expect(executionPolicy({ maxAttempts: 100, backoffMs: 0 }).maxAttempts).toBe(100);
    expect(executionPolicy({ maxAttempts: 1 }).maxAttempts).toBe(1);
  });

  it("refuses a lease without a holder or with a non-positive duration", () => {
    expect(codeOf(() => validateNewTask({ ...NEW, lease: { holder: "", durationMs: 1 } }))).toBe(
      "invalid_task",
    );
    expect(codeOf(() => validateNewTask({ ...NEW, lease: { holder: "a", durationMs: 0 } }))).toBe(
      "invalid_task",
    );
    expect(codeOf(() => validateNewTask({ ...NEW, lease: { holder: "a", durationMs: 1 } }))).toBe(
      null,
    );
  });
});

describe("queue: pure functions", () => {
  const queued = (execution = {}) => newTaskRecord({ ...NEW, execution }, ANONYMOUS, 100);
  const held = (execution = {}, durationMs = 1000) =>
    newTaskRecord({ ...NEW, execution, lease: { holder: "a", durationMs } }, ANONYMOUS, 100);

  it("newTaskRecord without a lease makes a queued task: no run yet", () => {
    const t = queued({ maxAttempts: 2 });
    expect(t.execution).toEqual({
      ...DEFAULT_EXECUTION_POLICY,
      maxAttempts: 2,
      attempt: 0,
      holder: null,
      fencingToken: 0,
      leaseExpiresAt: null,
      availableAt: null,
    });
    expect(t.inputAnswers).toEqual({});
  });

  it("newTaskRecord with a lease makes the holder's first run: attempt 1, token 1", () => {
    expect(held({}, 500).execution).toMatchObject({
      attempt: 1,
      holder: "a",
      fencingToken: 1,
      leaseExpiresAt: 600,
      availableAt: null,
    });
  });

  it("assertFence passes without a fence or with the holder's, else lease_lost", () => {
    const t = held();
    expect(codeOf(() => assertFence(t, undefined))).toBeNull();
    expect(codeOf(() => assertFence(t, { holder: "a", fencingToken: 1 }))).toBeNull();
    expect(codeOf(() => assertFence(t, { holder: "b", fencingToken: 1 }))).toBe("lease_lost");
    expect(codeOf(() => assertFence(t, { holder: "a", fencingToken: 2 }))).toBe("lease_lost");
    expect(codeOf(() => assertFence(queued(), { holder: "a", fencingToken: 0 }))).toBe(
      "lease_lost",
    );
  });

  it("isClaimable: running, no holder and past availableAt", () => {
    expect(isClaimable(queued(), 0)).toBe(true);
    expect(isClaimable(held(), 100)).toBe(false);
    expect(isClaimable(held(), Number.MAX_SAFE_INTEGER)).toBe(false);
    const waiting = requeueTask(held({ backoffMs: 50 }), 200, {
      countAttempt: true,
      backoffMs: 50,
      statusMessage: null,
    });
    expect(isClaimable(waiting, 249)).toBe(false);
    expect(isClaimable(waiting, 250)).toBe(true);
    expect(isClaimable(completeTask(queued(), 1, {}), 2)).toBe(false);
    expect(isClaimable(markTaskCancelled(queued(), 1), 2)).toBe(false);
    expect(isClaimable(requestTaskCancel(queued(), 1), 2)).toBe(true);
  });

  it("claimTask starts a run: next attempt and token, the holder, a lease from now", () => {
    const t = queued();
    const c = claimTask(t, "b", 300, 1000);
    expect(c.execution).toMatchObject({
      attempt: 1,
      holder: "b",
      fencingToken: 1,
      leaseExpiresAt: 1300,
      availableAt: null,
    });
    expect(c.version).toBe(t.version + 1);
    expect(c.status).toBe(t.status);
    expect(t.execution.holder).toBeNull();
  });

  it("renewTaskLease moves only the lease deadline: same version, same everything else", () => {
    const t = held();
    const r = renewTaskLease(t, 5000, 700);
    expect(r).toEqual({ ...t, execution: { ...t.execution, leaseExpiresAt: 5700 } });
    expect(r.version).toBe(t.version);
    expect(t.execution.leaseExpiresAt).toBe(1100);
  });

  it("requeueTask: back to working and the queue, questions dropped, answers kept", () => {
    let t: TaskRecord = held({ maxAttempts: 3 });
    t = requireTaskInput(t, 110, { a: { method: "elicitation/create" } });
    t = submitTaskInput(t, 120, { a: { v: 1 } }).task;
    t = requireTaskInput(t, 130, { b: { method: "elicitation/create" } });
    const r = requeueTask(t, 200, { countAttempt: true, backoffMs: 50, statusMessage: "again" });
    expect(r.status).toBe("working");
    expect(r.statusMessage).toBe("again");
    expect(r.lastUpdatedAt).toBe(200);
    expect(r.version).toBe(t.version + 1);
    expect(r.inputRequests).toEqual({});
    expect(r.inputResponses).toEqual({});
    expect(r.inputAnswers).toEqual({ a: { v: 1 } });
    expect(r.answeredInputKeys).toEqual(["a"]);
    expect(r.execution).toMatchObject({
      attempt: 1,
      holder: null,
      leaseExpiresAt: null,
      availableAt: 250,
      fencingToken: 1,
    });
  });

  it("requeueTask without counting the attempt gives the run back; no backoff means at once", () => {
    const r = requeueTask(held(), 200, { countAttempt: false, backoffMs: 0, statusMessage: null });
    expect(r.execution.attempt).toBe(0);
    expect(r.execution.availableAt).toBeNull();
    expect(claimTask(r, "b", 10, 300).execution).toMatchObject({ attempt: 1, fencingToken: 2 });
  });

  it("requeueTask refuses a finished task", () => {
    const done = completeTask(held(), 150, {});
    expect(
      codeOf(() =>
        requeueTask(done, 200, { countAttempt: true, backoffMs: 0, statusMessage: null }),
      ),
    ).toBe("invalid_transition");
    expect(INTENT_FROM.requeue).toEqual(["working", "input_required"]);
  });

  it("every terminal transition clears the holder and the lease, keeping the token", () => {
    for (const end of [
      (t: TaskRecord) => completeTask(t, 150, {}),
      (t: TaskRecord) => failTask(t, 150, { code: -1, message: "x" }),
      (t: TaskRecord) => markTaskCancelled(t, 150),
    ]) {
      expect(end(held()).execution).toMatchObject({
        holder: null,
        leaseExpiresAt: null,
        availableAt: null,
        fencingToken: 1,
        attempt: 1,
      });
    }
  });

  it("non-terminal writes leave the execution alone", () => {
    const t = held();
    expect(setTaskStatusMessage(t, 150, "x").execution).toEqual(t.execution);
    expect(requestTaskCancel(t, 150).execution).toEqual(t.execution);
    expect(requireTaskInput(t, 150, { q: { method: "m" } }).execution).toEqual(t.execution);
  });

  it("isOrphaned: held, running and the lease deadline reached", () => {
    const t = held({}, 1000); // lease until 1100
    expect(isOrphaned(t, 1099)).toBe(false);
    expect(isOrphaned(t, 1100)).toBe(true);
    expect(isOrphaned(queued(), Number.MAX_SAFE_INTEGER)).toBe(false);
    expect(isOrphaned(completeTask(t, 150, {}), Number.MAX_SAFE_INTEGER)).toBe(false);
  });

  it("recoverOrphan requeues with the backoff and a retrying message while attempts remain", () => {
    const t = held({ maxAttempts: 3, backoffMs: 40 });
    const r = recoverOrphan(t, 2000);
    expect(r.status).toBe("working");
    expect(r.statusMessage).toBe(retryingMessage("the worker was lost", 2, 3));
    expect(r.statusMessage).toBe("Retrying after the worker was lost (attempt 2 of 3)");
    expect(r.execution).toMatchObject({ attempt: 1, holder: null, availableAt: 2040 });
  });

  it("recoverOrphan fails the task with WORKER_LOST_ERROR on its last attempt", () => {
    const r = recoverOrphan(held({ maxAttempts: 1 }), 2000);
    expect(r.status).toBe("failed");
    expect(r.outcome).toEqual({ kind: "error", error: WORKER_LOST_ERROR });
    expect(r.statusMessage).toBe(WORKER_LOST_ERROR.message);
    expect(r.execution.holder).toBeNull();
    expect(WORKER_LOST_ERROR.code).toBe(-32603);
    expect(Object.isFrozen(WORKER_LOST_ERROR)).toBe(true);
  });

  it("submitTaskInput records each accepted answer in inputAnswers; taking leaves them", () => {
    let t: TaskRecord = requireTaskInput(queued(), 1, {
      a: { method: "m" },
      b: { method: "m" },
    });
    const first = submitTaskInput(t, 2, { a: { v: 1 }, zzz: { v: 0 } });
    expect(first.task.inputAnswers).toEqual({ a: { v: 1 } });
    t = takeTaskInputResponses(first.task).task;
    expect(t.inputAnswers).toEqual({ a: { v: 1 } });
    const again = submitTaskInput(t, 3, { a: { v: 2 }, b: { v: 3 } });
    expect(again.acceptedKeys).toEqual(["b"]);
    expect(again.task.inputAnswers).toEqual({ a: { v: 1 }, b: { v: 3 } });
  });
});
