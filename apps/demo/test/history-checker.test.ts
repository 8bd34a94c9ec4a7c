import { describe, expect, it } from "vitest";
import {
  type CheckOptions,
  checkHistory,
  type History,
  type HistoryOp,
} from "./helpers/history-checker.js";

/**
 * The fault suite's checker on hand-made histories: a clean one passes, and each planted
 * anomaly is caught (and only that one), so a green fault run means something.
 */
const OPTIONS: CheckOptions = { maxAttempts: { durable_job: 3 }, faultMarginMs: 1_000 };
const MODERN = "2026-07-28" as const;
const LEGACY = "2025-11-25" as const;

function op(partial: Partial<HistoryOp> & Pick<HistoryOp, "kind" | "invokeAt">): HistoryOp {
  return {
    client: "c1",
    owner: "alice",
    era: MODERN,
    node: "n1",
    completeAt: partial.invokeAt + 10,
    outcome: "ok",
    httpStatus: 200,
    ...partial,
  };
}

const create = (taskId: string, tool: string, at: number, extra: Partial<HistoryOp> = {}) =>
  op({
    kind: "create",
    invokeAt: at,
    taskId,
    tool,
    seen: [{ taskId, status: "working" }],
    ...extra,
  });
const get = (taskId: string, status: string, at: number, extra: Partial<HistoryOp> = {}) =>
  op({ kind: "get", invokeAt: at, taskId, seen: [{ taskId, status }], ...extra });
const final = (taskId: string, status: string, at: number, extra: Partial<HistoryOp> = {}) =>
  get(taskId, status, at, { final: true, ...extra });

/** A history every invariant holds on: two owners, both eras, a fault, cancels, retries. */
function clean(): HistoryOp[] {
  return [
    create("a1", "durable_job", 0),
    create("a2", "slow_compute", 5),
    create("b1", "slow_compute", 6, { owner: "bob", client: "c2", era: LEGACY }),
    get("a1", "working", 100),
    op({ kind: "cancel", invokeAt: 120, taskId: "a2" }),
    // A 5xx-free but unanswered request while node n2 was killed: inside the fault.
    op({ kind: "get", invokeAt: 1_500, taskId: "a1", node: "n2", outcome: "no_answer" }),
    get("a1", "completed", 3_000, { seen: [{ taskId: "a1", status: "completed" }] }),
    op({
      kind: "list",
      invokeAt: 3_100,
      owner: "bob",
      client: "c2",
      era: LEGACY,
      seen: [{ taskId: "b1", status: "working" }],
    }),
    op({
      kind: "cancel",
      invokeAt: 3_200,
      owner: "bob",
      client: "c2",
      era: LEGACY,
      taskId: "b1",
      seen: [{ taskId: "b1", status: "cancelled" }],
    }),
    // Bob probes Alice's task: refused, as it must be.
    op({
      kind: "get",
      invokeAt: 3_300,
      owner: "bob",
      client: "c2",
      taskId: "a1",
      outcome: "error",
      errorCode: -32602,
    }),
    final("a1", "completed", 9_000, {
      seen: [{ taskId: "a1", status: "completed", text: "done by n1 on attempt 2" }],
    }),
    final("a2", "cancelled", 9_010),
    final("b1", "cancelled", 9_020, { owner: "bob", client: "c2", era: LEGACY }),
  ];
}
const FAULTS: History["faults"] = [{ kind: "kill", node: "n2", startAt: 1_000, endAt: 2_000 }];

const check = (ops: HistoryOp[], faults = FAULTS) => checkHistory({ ops, faults }, OPTIONS);
const kinds = (ops: HistoryOp[], faults = FAULTS) => check(ops, faults).map((a) => a.kind);

describe("the fault suite's history checker", () => {
  it("finds nothing wrong in a clean history", () => {
    expect(check(clean())).toEqual([]);
  });

  it("catches an acknowledged task that a later read of its owner does not find", () => {
    const ops = [
      ...clean(),
      op({ kind: "get", invokeAt: 200, taskId: "a2", outcome: "error", errorCode: -32602 }),
    ];
    expect(kinds(ops)).toEqual(["lost"]);
  });

  it("catches an acknowledged task missing from the final read-back", () => {
    const ops = clean().filter((o) => !(o.final && o.taskId === "a2"));
    expect(kinds(ops)).toEqual(["lost"]);
  });

  it("catches a task seen terminal, then working again", () => {
    const ops = [...clean(), get("a1", "working", 3_500)];
    expect(kinds(ops)).toEqual(["left_terminal"]);
  });

  it("catches a terminal task whose result changed", () => {
    const ops = [
      ...clean(),
      get("a1", "completed", 3_020, {
        seen: [{ taskId: "a1", status: "completed", text: "done by n1 on attempt 2" }],
      }),
      get("a1", "completed", 3_500, {
        seen: [{ taskId: "a1", status: "completed", text: "done by n3 on attempt 3" }],
      }),
    ];
    expect(kinds(ops)).toEqual(["left_terminal"]);
  });

  it("does not call overlapping reads a regression (neither began after the other ended)", () => {
    const ops = [
      ...clean(),
      get("a1", "completed", 2_500, { completeAt: 2_900 }),
      get("a1", "working", 2_600, { completeAt: 2_950 }),
    ];
    expect(check(ops)).toEqual([]);
  });

  it("catches a task still running at the end", () => {
    const ops = clean().map((o) =>
      o.final && o.taskId === "a2" ? { ...o, seen: [{ taskId: "a2", status: "working" }] } : o,
    );
    expect(kinds(ops)).toEqual(["unfinished"]);
  });

  it("catches a retryable task that ended failed", () => {
    const ops = clean().map((o) =>
      o.final && o.taskId === "a1" ? { ...o, seen: [{ taskId: "a1", status: "failed" }] } : o,
    );
    // Its earlier read saw it completed, too.
    expect(kinds(ops).sort()).toEqual(["left_terminal", "retry_exhausted"]);
  });

  it("catches a retryable task completed past its attempts", () => {
    const ops = clean().map((o) =>
      o.final && o.taskId === "a1"
        ? { ...o, seen: [{ taskId: "a1", status: "completed", text: "done by n1 on attempt 4" }] }
        : o,
    );
    expect(kinds(ops)).toEqual(["retry_exhausted"]);
  });

  it("catches a cancel acknowledged while the task still ran, which then ended failed (Worker lost)", () => {
    const ops = [
      ...clean().map((o) =>
        o.final && o.taskId === "a2" ? { ...o, seen: [{ taskId: "a2", status: "failed" }] } : o,
      ),
      get("a2", "working", 400),
    ];
    expect(kinds(ops)).toEqual(["cancel_ignored"]);
  });

  it("lets a 2026 cancel be acknowledged on a task that may have ended already", () => {
    // No read after the acknowledgement saw it running: it may have failed before the cancel.
    const ops = [
      ...clean().map((o) =>
        o.final && o.taskId === "a2" ? { ...o, seen: [{ taskId: "a2", status: "failed" }] } : o,
      ),
      get("a2", "working", 50),
    ];
    expect(check(ops)).toEqual([]);
  });

  it("lets a 2026 cooperative cancel lose to the handler's result, not a 2025 immediate one", () => {
    const modern = clean().map((o) =>
      o.final && o.taskId === "a2" ? { ...o, seen: [{ taskId: "a2", status: "completed" }] } : o,
    );
    expect(check(modern)).toEqual([]);
    const legacy = clean().map((o) =>
      o.final && o.taskId === "b1" ? { ...o, seen: [{ taskId: "b1", status: "completed" }] } : o,
    );
    // (Its cancel's own answer showed it cancelled, too.)
    expect(kinds(legacy).sort()).toEqual(["cancel_ignored", "left_terminal"]);
  });

  it("catches a task that ended cancelled though nobody asked", () => {
    const ops = clean().map((o) =>
      o.final && o.taskId === "a1" ? { ...o, seen: [{ taskId: "a1", status: "cancelled" }] } : o,
    );
    expect(kinds(ops).sort()).toEqual(["cancelled_unasked", "left_terminal"]);
  });

  it("catches another owner's task in a get or a list", () => {
    const probe = op({
      kind: "get",
      invokeAt: 3_400,
      owner: "bob",
      client: "c2",
      taskId: "a1",
      seen: [{ taskId: "a1", status: "completed" }],
    });
    expect(kinds([...clean(), probe])).toEqual(["owners_mixed"]);
    const list = op({
      kind: "list",
      invokeAt: 3_400,
      owner: "bob",
      client: "c2",
      era: LEGACY,
      seen: [
        { taskId: "b1", status: "cancelled" },
        { taskId: "a2", status: "cancelled" },
      ],
    });
    expect(kinds([...clean(), list])).toEqual(["owners_mixed"]);
  });

  it("catches a 5xx or a missing answer outside a fault, not inside one or its margin", () => {
    const outside = op({ kind: "get", invokeAt: 5_000, taskId: "a1", httpStatus: 503 });
    expect(kinds([...clean(), outside])).toEqual(["server_error"]);
    const silent = op({ kind: "get", invokeAt: 5_000, taskId: "a1", outcome: "no_answer" });
    expect(kinds([...clean(), silent])).toEqual(["server_error"]);
    const inMargin = op({ kind: "get", invokeAt: 2_500, taskId: "a1", httpStatus: 503 });
    expect(check([...clean(), inMargin])).toEqual([]);
    // Without the fault, the clean history's unanswered request is one too.
    expect(kinds(clean(), [])).toEqual(["server_error"]);
  });
});
