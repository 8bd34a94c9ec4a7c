import { describe, expect, it } from "vitest";
import { ANONYMOUS, isTerminal, TASK_STATUSES, type TaskStatus } from "../src/index.js";
import {
  canTransition,
  completeTask,
  failTask,
  isExpired,
  newTaskRecord,
  requestTaskCancel,
  requireTaskInput,
  submitTaskInput,
  TRANSITIONS,
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
