/**
 * The checker of the history-checked fault suite (`fault-history.test.ts`): a pure function
 * over what the clients recorded (every operation with its invoke and complete times) and
 * the fault windows, returning every anomaly found. Kept apart from the suite so that it can
 * be tested on hand-made histories (`history-checker.test.ts`).
 */

export type Era = "2026-07-28" | "2025-11-25";

/** A task's state as one operation saw it. */
export interface SeenTask {
  readonly taskId: string;
  readonly status: string;
  /** The text of a completed task's result, when the operation read it. */
  readonly text?: string;
  /** The status message, or a failed task's error message: for the report only. */
  readonly message?: string;
}

/** One operation a client performed, as it saw it. */
export interface HistoryOp {
  /** Which client loop sent it. */
  readonly client: string;
  /** The owner the client authenticates as. */
  readonly owner: string;
  readonly era: Era;
  readonly kind: "create" | "get" | "cancel" | "answer" | "list" | "result";
  /** The node it was sent to. */
  readonly node: string;
  /** When it was sent and when its answer (or the lack of one) was known, in ms. */
  readonly invokeAt: number;
  readonly completeAt: number;
  /** The task it names (get, cancel, answer, result) or created (create, when answered). */
  readonly taskId?: string;
  /** create: the tool called. */
  readonly tool?: string;
  /** `ok` a JSON-RPC result, `error` a JSON-RPC error or 4xx, `no_answer` none (or no status line). */
  readonly outcome: "ok" | "error" | "no_answer";
  readonly httpStatus?: number;
  /** The JSON-RPC error code, for `error`. */
  readonly errorCode?: number;
  /** Every task state the answer showed (a get, a list's items, a 2025 cancel's task). */
  readonly seen?: readonly SeenTask[];
  /** Part of the final read-back after the faults ended (the task's settled state). */
  readonly final?: boolean;
}

/** A fault, from its injection until the system was whole again. */
export interface FaultWindow {
  readonly kind: "kill" | "stall" | "link_cut" | "db_restart";
  /** The node it hit; absent for the database. */
  readonly node?: string;
  readonly startAt: number;
  readonly endAt: number;
}

export interface History {
  readonly ops: readonly HistoryOp[];
  readonly faults: readonly FaultWindow[];
}

export interface CheckOptions {
  /** Tools that retry a lost run, with their most runs (`durable_job`: 3). */
  readonly maxAttempts: Readonly<Record<string, number>>;
  /** How long after a fault's end its effects may still show (a 5xx, no answer). */
  readonly faultMarginMs: number;
}

export type AnomalyKind =
  | "lost"
  | "left_terminal"
  | "unfinished"
  | "retry_exhausted"
  | "cancel_ignored"
  | "cancelled_unasked"
  | "owners_mixed"
  | "server_error";

export interface Anomaly {
  readonly kind: AnomalyKind;
  readonly taskId?: string;
  readonly detail: string;
}

const TERMINAL = new Set(["completed", "failed", "cancelled"]);
/** `-32602`: the answer to a task that does not exist for the caller (or a bad parameter). */
const NOT_FOUND = -32602;

interface Observation {
  readonly op: HistoryOp;
  readonly seen: SeenTask;
}

interface Created {
  readonly op: HistoryOp;
  readonly taskId: string;
}

/**
 * Checks a history. The invariants (documented in docs/reliability.md):
 * - `lost`: a task whose creation was acknowledged is found by every later read of its
 *   owner, and by the final read-back;
 * - `left_terminal`: once a read saw a task terminal, every read that started after it
 *   ended sees the same status and result (per-task histories never leave a terminal state);
 * - `unfinished`: the final read-back sees every task terminal;
 * - `retry_exhausted`: a retryable tool's task ends `completed` (or `cancelled` when asked)
 *   within its attempts, never `failed`;
 * - `cancel_ignored`: an acknowledged cancel ends the task `cancelled` (a 2026-07-28
 *   cooperative cancel, once a later read saw the task still running, may also lose to the
 *   handler's own result, `completed`), never `failed`; `cancelled_unasked`: no task ends
 *   `cancelled` that nobody tried to cancel;
 * - `owners_mixed`: no operation ever shows a task of another owner;
 * - `server_error`: no 5xx and no missing answer outside a fault window (plus the margin).
 */
export function checkHistory(history: History, options: CheckOptions): Anomaly[] {
  const anomalies: Anomaly[] = [];
  const created = new Map<string, Created>();
  for (const op of history.ops) {
    if (op.kind === "create" && op.outcome === "ok" && op.taskId !== undefined) {
      created.set(op.taskId, { op, taskId: op.taskId });
    }
  }
  const observations = new Map<string, Observation[]>();
  for (const op of history.ops) {
    if (op.outcome !== "ok") continue;
    for (const seen of op.seen ?? []) {
      let list = observations.get(seen.taskId);
      if (list === undefined) {
        list = [];
        observations.set(seen.taskId, list);
      }
      list.push({ op, seen });
    }
  }

  checkOwners(history.ops, created, anomalies);
  for (const [taskId, task] of created) {
    const seen = observations.get(taskId) ?? [];
    checkFound(history.ops, task, anomalies);
    checkTerminalKept(taskId, seen, anomalies);
    const final = finalState(seen);
    if (final === undefined) {
      anomalies.push({ kind: "lost", taskId, detail: "the final read-back did not find it" });
      continue;
    }
    if (!TERMINAL.has(final.status)) {
      anomalies.push({ kind: "unfinished", taskId, detail: `still ${final.status} at the end` });
      continue;
    }
    checkCancel(history.ops, task, seen, final, anomalies);
    checkRetries(task, final, options, anomalies);
  }
  checkServerErrors(history, options, anomalies);
  return anomalies;
}

/** Owners apart: every task an operation showed belongs to the operation's owner. */
function checkOwners(
  ops: readonly HistoryOp[],
  created: ReadonlyMap<string, Created>,
  anomalies: Anomaly[],
): void {
  for (const op of ops) {
    if (op.outcome !== "ok") continue;
    for (const seen of op.seen ?? []) {
      const owner = created.get(seen.taskId)?.op.owner;
      if (owner !== undefined && owner !== op.owner) {
        anomalies.push({
          kind: "owners_mixed",
          taskId: seen.taskId,
          detail: `${op.owner}'s ${op.kind} at ${op.invokeAt} showed ${owner}'s task`,
        });
      }
    }
  }
}

/** No acknowledged task lost: its owner's reads that began after the acknowledgement find it. */
function checkFound(ops: readonly HistoryOp[], task: Created, anomalies: Anomaly[]): void {
  for (const op of ops) {
    if (
      op.taskId === task.taskId &&
      (op.kind === "get" || op.kind === "result") &&
      op.owner === task.op.owner &&
      op.era === task.op.era &&
      op.invokeAt > task.op.completeAt &&
      op.outcome === "error" &&
      op.errorCode === NOT_FOUND
    ) {
      anomalies.push({
        kind: "lost",
        taskId: task.taskId,
        detail: `created (acknowledged at ${task.op.completeAt}), not found by a ${op.kind} at ${op.invokeAt}`,
      });
    }
  }
}

/** Once seen terminal, every read that started after that read ended sees the same. */
function checkTerminalKept(
  taskId: string,
  seen: readonly Observation[],
  anomalies: Anomaly[],
): void {
  const terminal = seen.filter((o) => TERMINAL.has(o.seen.status));
  for (const before of terminal) {
    for (const after of seen) {
      if (after.op.invokeAt <= before.op.completeAt) continue;
      const statusChanged = after.seen.status !== before.seen.status;
      const textChanged =
        before.seen.text !== undefined &&
        after.seen.text !== undefined &&
        after.seen.text !== before.seen.text;
      if (statusChanged || textChanged) {
        anomalies.push({
          kind: "left_terminal",
          taskId,
          detail: `seen ${before.seen.status}${before.seen.text ? ` (${before.seen.text})` : ""} by a read ending at ${before.op.completeAt}, then ${after.seen.status}${after.seen.text ? ` (${after.seen.text})` : ""} by one starting at ${after.op.invokeAt}`,
        });
        return;
      }
    }
  }
}

/** The task's state at the end: the last final read that found it (with a result's text if read). */
function finalState(seen: readonly Observation[]): SeenTask | undefined {
  const finals = seen.filter((o) => o.op.final === true);
  if (finals.length === 0) return undefined;
  const last = finals.reduce((a, b) => (b.op.invokeAt >= a.op.invokeAt ? b : a));
  const text = finals.find((o) => o.seen.text !== undefined)?.seen.text;
  return text === undefined ? last.seen : { ...last.seen, text };
}

/**
 * Acknowledged cancels are honoured; nothing ends cancelled that nobody tried to cancel. A
 * 2025-11-25 cancel is immediate: its answer is the task, cancelled. A 2026-07-28 cancel is
 * cooperative and is acknowledged even on a task already terminal, so it counts as recorded
 * on a live task only when a read that began after the acknowledgement still saw the task
 * unfinished; the task then ends `cancelled`, or `completed` when the handler's result came
 * first, never `failed`.
 */
function checkCancel(
  ops: readonly HistoryOp[],
  task: Created,
  observations: readonly Observation[],
  final: SeenTask,
  anomalies: Anomaly[],
): void {
  const cancels = ops.filter((op) => op.kind === "cancel" && op.taskId === task.taskId);
  const acknowledged = cancels.filter((op) => op.outcome === "ok");
  const immediate = acknowledged.find((op) => op.era === "2025-11-25");
  const cooperative = acknowledged.find(
    (op) =>
      op.era === "2026-07-28" &&
      observations.some((o) => o.op.invokeAt > op.completeAt && !TERMINAL.has(o.seen.status)),
  );
  if (immediate !== undefined && final.status !== "cancelled") {
    anomalies.push({
      kind: "cancel_ignored",
      taskId: task.taskId,
      detail: `2025-11-25 cancel acknowledged at ${immediate.completeAt}, ended ${final.status}`,
    });
  } else if (cooperative !== undefined && final.status === "failed") {
    anomalies.push({
      kind: "cancel_ignored",
      taskId: task.taskId,
      detail: `2026-07-28 cancel acknowledged at ${cooperative.completeAt} while it was still running, ended ${final.status}${final.message ? ` (${final.message})` : ""}`,
    });
  } else if (final.status === "cancelled" && cancels.length === 0) {
    anomalies.push({
      kind: "cancelled_unasked",
      taskId: task.taskId,
      detail: "ended cancelled, but nobody tried to cancel it",
    });
  }
}

/** Retryable tools complete within their attempts (or end cancelled when asked to). */
function checkRetries(
  task: Created,
  final: SeenTask,
  options: CheckOptions,
  anomalies: Anomaly[],
): void {
  const tool = task.op.tool ?? "";
  const most = options.maxAttempts[tool];
  if (most === undefined) return;
  if (final.status === "failed") {
    anomalies.push({
      kind: "retry_exhausted",
      taskId: task.taskId,
      detail: `${tool} (at most ${most} runs) ended failed`,
    });
    return;
  }
  const attempt = Number(/on attempt (\d+)/.exec(final.text ?? "")?.[1] ?? 0);
  if (attempt > most) {
    anomalies.push({
      kind: "retry_exhausted",
      taskId: task.taskId,
      detail: `${tool} (at most ${most} runs) completed on attempt ${attempt}`,
    });
  }
}

/** No 5xx and no missing answer, except while a fault (or its margin) overlaps the request. */
function checkServerErrors(history: History, options: CheckOptions, anomalies: Anomaly[]): void {
  const margin = options.faultMarginMs;
  for (const op of history.ops) {
    const bad = op.outcome === "no_answer" || (op.httpStatus !== undefined && op.httpStatus >= 500);
    if (!bad) continue;
    const inFault = history.faults.some(
      (f) => op.invokeAt <= f.endAt + margin && op.completeAt >= f.startAt,
    );
    if (!inFault) {
      anomalies.push({
        kind: "server_error",
        ...(op.taskId !== undefined && { taskId: op.taskId }),
        detail: `${op.era} ${op.kind} to ${op.node} at ${op.invokeAt}: ${op.outcome === "no_answer" ? "no answer" : `HTTP ${op.httpStatus}`} with no fault in progress`,
      });
    }
  }
}
