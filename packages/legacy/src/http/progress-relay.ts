import type { TaskProgress, TaskRunner } from "@mcp-tasks/core";

/** A `notifications/progress` to send. */
export interface ProgressNotification {
  readonly method: "notifications/progress";
  readonly params: Record<string, unknown>;
}

/**
 * `notifications/progress` for one task created with a progress token, which keeps the
 * original token while the task runs (2025-11-25). The handler's own reports are relayed
 * when it makes any; until then each status change counts as one step. Progress only ever
 * increases, and stops at the terminal status (the owner stops the relay).
 */
export class ProgressRelay {
  readonly #token: string | number;
  readonly #send: (notification: ProgressNotification) => void;
  readonly #unsubscribe: () => void;
  #explicit = false;
  #progress = 0;

  constructor(
    runner: TaskRunner,
    taskId: string,
    token: string | number,
    send: (notification: ProgressNotification) => void,
  ) {
    this.#token = token;
    this.#send = send;
    this.#unsubscribe = runner.onProgress((report) => this.#onReport(report), taskId);
  }

  /** The task's status or message changed while it runs. */
  statusChanged(message: string | undefined): void {
    if (this.#explicit) return;
    this.#progress += 1;
    this.#emit({ progress: this.#progress, ...(message !== undefined && { message }) });
  }

  stop(): void {
    this.#unsubscribe();
  }

  #onReport(report: TaskProgress): void {
    if (report.progress <= this.#progress) return;
    this.#explicit = true;
    this.#progress = report.progress;
    this.#emit({
      progress: report.progress,
      ...(report.total !== undefined && { total: report.total }),
      ...(report.message !== undefined && { message: report.message }),
    });
  }

  #emit(params: Record<string, unknown>): void {
    this.#send({
      method: "notifications/progress",
      params: { progressToken: this.#token, ...params },
    });
  }
}
