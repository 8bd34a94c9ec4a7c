import { type CancelMode, cancelModeOf, type TaskRecord, type TaskStatus } from "@mcp-tasks/core";
import { type InputForm, inputForm } from "./answers.js";
import { ownerLabel } from "./viewer.js";

/** A task as one row of the list. Times are ISO 8601. */
export interface TaskRow {
  readonly taskId: string;
  readonly toolName: string;
  readonly status: TaskStatus;
  readonly statusMessage: string | null;
  readonly createdAt: string;
  readonly lastUpdatedAt: string;
  readonly era: string;
  /** The owner, for operators only. */
  readonly owner?: string;
  readonly version: number;
}

/** One step of a task's history, as far as it was recorded. */
export interface HistoryEntry {
  readonly at: string;
  readonly status: TaskStatus;
  readonly event: string;
}

/** A task as the detail panel shows it. */
export interface TaskDetail extends TaskRow {
  readonly arguments: Readonly<Record<string, unknown>>;
  readonly history: readonly HistoryEntry[];
  readonly inputRequests: readonly InputForm[];
  readonly answeredInputKeys: readonly string[];
  readonly result: Readonly<Record<string, unknown>> | null;
  readonly error: {
    readonly code: number;
    readonly message: string;
    readonly data?: unknown;
  } | null;
  readonly cancelRequestedAt: string | null;
  readonly ttlMs: number | null;
  readonly ttlAnchor: string;
  readonly expiresAt: string | null;
  readonly pollIntervalMs: number | null;
  readonly execution: {
    readonly attempt: number;
    readonly maxAttempts: number;
    readonly holder: string | null;
    readonly leaseExpiresAt: string | null;
    readonly fencingToken: number;
    readonly availableAt: string | null;
    readonly deadlineMs: number | null;
  };
  /** What cancelling does for this task's era: a cooperative request, or at once. */
  readonly cancelMode: CancelMode;
}

/** A change the console saw on the change feed (see `LiveHub`). */
export interface ObservedChange {
  readonly at: number;
  readonly kind: string;
  readonly status: TaskStatus;
  readonly version: number;
}

const iso = (ms: number) => new Date(ms).toISOString();
const isoOrNull = (ms: number | null) => (ms === null ? null : iso(ms));

/** The row of a task; `withOwner` for operators. */
export function taskRow(task: TaskRecord, withOwner: boolean): TaskRow {
  return {
    taskId: task.taskId,
    toolName: task.request.toolName,
    status: task.status,
    statusMessage: task.statusMessage,
    createdAt: iso(task.createdAt),
    lastUpdatedAt: iso(task.lastUpdatedAt),
    era: task.era,
    ...(withOwner && { owner: ownerLabel(task.owner) }),
    version: task.version,
  };
}

const EVENT_WORDS: Readonly<Record<string, string>> = {
  created: "created",
  status_changed: "status changed",
  status_message: "status message",
  input_requested: "input requested",
  input_submitted: "input answered",
  input_taken: "input handed to the worker",
  cancel_requested: "cancellation requested",
  queued: "queued",
  claimed: "claimed by a worker",
};

/**
 * The history: what the record itself says (creation, the cancel request, its latest
 * change) merged with the changes this console observed on the change feed while running.
 */
function history(task: TaskRecord, observed: readonly ObservedChange[]): HistoryEntry[] {
  const entries: { at: number; status: TaskStatus; event: string; order: number }[] = [
    { at: task.createdAt, status: "working", event: "created", order: 0 },
  ];
  for (const change of observed) {
    if (change.kind === "created" || change.version >= task.version) continue;
    entries.push({
      at: change.at,
      status: change.status,
      event: EVENT_WORDS[change.kind] ?? change.kind,
      order: change.version,
    });
  }
  if (task.cancelRequestedAt !== null && !observed.some((c) => c.kind === "cancel_requested")) {
    entries.push({
      at: task.cancelRequestedAt,
      status: task.status,
      event: "cancellation requested",
      order: task.version - 0.5,
    });
  }
  if (task.version > 1) {
    const last = observed.find((c) => c.version === task.version);
    entries.push({
      at: task.lastUpdatedAt,
      status: task.status,
      event: last ? (EVENT_WORDS[last.kind] ?? last.kind) : "latest change",
      order: task.version,
    });
  }
  entries.sort((a, b) => a.at - b.at || a.order - b.order);
  return entries.map(({ at, status, event }) => ({ at: iso(at), status, event }));
}

/** The detail of a task. */
export function taskDetail(
  task: TaskRecord,
  withOwner: boolean,
  observed: readonly ObservedChange[],
): TaskDetail {
  const outcome = task.outcome;
  const e = task.execution;
  return {
    ...taskRow(task, withOwner),
    arguments: task.request.arguments,
    history: history(task, observed),
    inputRequests: Object.entries(task.inputRequests).map(([key, request]) =>
      inputForm(key, request),
    ),
    answeredInputKeys: task.answeredInputKeys,
    result: outcome?.kind === "result" ? outcome.result : null,
    error: outcome?.kind === "error" ? outcome.error : null,
    cancelRequestedAt: isoOrNull(task.cancelRequestedAt),
    ttlMs: task.ttlMs,
    ttlAnchor: task.ttlAnchor,
    expiresAt: isoOrNull(task.expiresAt),
    pollIntervalMs: task.pollIntervalMs,
    execution: {
      attempt: e.attempt,
      maxAttempts: e.maxAttempts,
      holder: e.holder,
      leaseExpiresAt: isoOrNull(e.leaseExpiresAt),
      fencingToken: e.fencingToken,
      availableAt: isoOrNull(e.availableAt),
      deadlineMs: e.deadlineMs,
    },
    cancelMode: cancelModeOf(task.era),
  };
}
