import type { Owner } from "./owner.js";
import type { InputRequest, InputResponse } from "./task.js";

/** What a handler sees while it runs as a task. */
export interface TaskContext {
  readonly taskId: string;
  readonly owner: Owner;
  /**
   * Aborted when cancellation is requested (from any node), the task ends elsewhere, the
   * run passes its deadline or loses its lease to another run.
   */
  readonly signal: AbortSignal;
  /** Which run of the task this is: 1 for the first, 2 for the first retry, … */
  readonly attempt: number;
  /** The worker running it (the lease holder), e.g. for logs or results naming the node. */
  readonly worker: string;
  /**
   * Parks the task in `input_required` until every request is answered, and resolves with
   * the answers by the same names. Names may repeat across calls: the runner mints fresh
   * keys. A re-run of the task asking the same names in the same order gets the answers
   * given before at once. Rejects with `signal.reason` if the task is cancelled meanwhile.
   */
  requireInput(
    requests: Readonly<Record<string, InputRequest>>,
    statusMessage?: string | null,
  ): Promise<Record<string, InputResponse>>;
  /** Updates the human-readable status message; a no-op once the task has ended. */
  setStatusMessage(statusMessage: string | null): Promise<void>;
  /**
   * Reports progress (e.g. 30 of 100). Not stored: it reaches listeners on this node
   * (`TaskRunner.onProgress`), such as the 2025-11-25 facade's `notifications/progress`.
   * Ignored once the task has ended, and when `progress` is not a finite number.
   */
  reportProgress(progress: number, total?: number, message?: string): void;
}

/** One progress report of a running task. */
export interface TaskProgress {
  readonly taskId: string;
  readonly progress: number;
  readonly total?: number;
  readonly message?: string;
}

/** Receives progress reports. */
export type TaskProgressListener = (report: TaskProgress) => void;

/** A tool body run as a task: returns the tool result, or throws to fail the task. */
export type TaskHandler = (
  args: Readonly<Record<string, unknown>>,
  ctx: TaskContext,
) => Promise<Readonly<Record<string, unknown>>> | Readonly<Record<string, unknown>>;
