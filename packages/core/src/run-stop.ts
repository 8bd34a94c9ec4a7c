/**
 * Why a run stops: the errors its handler's signal carries, and the state that says whether
 * the run's outcome is still its own to write.
 */

import type { TaskStatus } from "./task.js";

/** The error a cancelled handler's signal carries. */
export class TaskCancelledError extends Error {
  override readonly name = "AbortError";
  constructor(taskId: string) {
    super(`Task ${taskId} was cancelled`);
  }
}

/**
 * Why a run stopped other than by cancellation: its deadline passed, another run
 * superseded it (its lease was lost), its worker handed it back on shutdown, or its lease
 * ran out while the store could not be reached to renew it (`lease_expired`: the task is
 * then recovered like any lost worker's, by its retry policy). None of these is the
 * handler's outcome: the run's result, if any, is discarded.
 */
export class RunStoppedError extends Error {
  override readonly name = "AbortError";
  readonly reason: "deadline" | "superseded" | "handed_back" | "lease_expired";
  constructor(taskId: string, reason: RunStoppedError["reason"]) {
    super(
      reason === "deadline"
        ? `Task ${taskId} ran past its deadline`
        : reason === "superseded"
          ? `Task ${taskId} is now run elsewhere: this run lost its lease`
          : reason === "lease_expired"
            ? `Task ${taskId} stopped: its lease ran out while the task store was unavailable`
            : `Task ${taskId} was handed back to the queue by a stopping worker`,
    );
    this.reason = reason;
  }
}

/** Why a run stopped without an outcome of its own. */
export type StopReason = RunStoppedError["reason"];

/**
 * Whether a run's outcome is still its own to write, and if not, why. Once something
 * decided it (the handler, the deadline, a hand-back, a stop, the task ending elsewhere)
 * nothing else writes one.
 */
export class RunStopState {
  /** The outcome has been decided (written or being written, or given up). */
  outcomeDecided = false;
  /** Why the run stopped without an outcome of its own, when it did. */
  stoppedBy: StopReason | undefined;
  /** The status the task was given elsewhere while this run held it (an immediate cancel). */
  endedElsewhereAs: TaskStatus | undefined;
  /** The task's cancellation was seen requested while the run held it. */
  cancelSeen = false;

  /** Takes the decision of the outcome: false when it was already taken. */
  decide(): boolean {
    if (this.outcomeDecided) return false;
    this.outcomeDecided = true;
    return true;
  }

  /** What the run's span reports when it wrote nothing: why it stopped, else `discarded`. */
  get unwrittenOutcome(): string {
    return this.stoppedBy ?? this.endedElsewhereAs ?? "discarded";
  }
}
