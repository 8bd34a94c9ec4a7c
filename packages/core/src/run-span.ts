/**
 * A run's span (`mcp.task.run`): started when the run starts, noting the task's status
 * changes and input rounds, ended with the run's outcome.
 */

import { ROOT_CONTEXT, type Span, SpanKind, SpanStatusCode, type Tracer } from "@opentelemetry/api";
import type { TaskRecord } from "./task.js";
import { TASK_SPAN_ATTRIBUTES, TASK_SPAN_NAMES, withRemoteParent } from "./tracing.js";

/** One run's span; a no-op once ended. */
export class RunSpan {
  #span: Span | undefined;
  /** The status last recorded on the span, to add an event only when it changes. */
  #status: TaskRecord["status"];

  /**
   * Starts the span of a run of `task` by `worker`: a child of the context stored with the
   * task (its creation, possibly on another node), else the root of a new trace — never of
   * whatever happened to be active when the task was claimed.
   */
  constructor(tracer: Tracer, task: TaskRecord, worker: string) {
    const A = TASK_SPAN_ATTRIBUTES;
    this.#status = task.status;
    this.#span = tracer.startSpan(
      TASK_SPAN_NAMES.run,
      {
        kind: SpanKind.CONSUMER,
        attributes: {
          [A.taskId]: task.taskId,
          [A.toolName]: task.request.toolName,
          [A.era]: task.era,
          [A.status]: task.status,
          [A.attempt]: task.execution.attempt,
          [A.worker]: worker,
        },
      },
      withRemoteParent(task.traceContext, ROOT_CONTEXT),
    );
  }

  /** Adds a `mcp.task.status` event when the task's status differs from the last one seen. */
  noteStatus(status: TaskRecord["status"]): void {
    if (status === this.#status) return;
    this.#status = status;
    const span = this.#span;
    if (span?.isRecording())
      span.addEvent("mcp.task.status", { [TASK_SPAN_ATTRIBUTES.status]: status });
  }

  /** Adds an input-round event (`mcp.task.input_requested` / `mcp.task.input_received`). */
  noteInput(event: "requested" | "received", keys: readonly string[]): void {
    const span = this.#span;
    if (span?.isRecording())
      span.addEvent(`mcp.task.input_${event}`, { "mcp.task.input.keys": [...keys] });
  }

  /**
   * Ends the span with the run's outcome: the record it `written`, or, when it wrote none,
   * `unwritten` (why it stopped: superseded, handed back, ended elsewhere first).
   */
  end(written: TaskRecord | undefined, unwritten: string): void {
    const span = this.#span;
    if (span === undefined) return;
    this.#span = undefined;
    if (span.isRecording()) {
      const A = TASK_SPAN_ATTRIBUTES;
      let outcome: string;
      if (written !== undefined) {
        span.addEvent("mcp.task.status", { [A.status]: written.status });
        span.setAttribute(A.status, written.status);
        outcome = written.status === "working" ? "requeued" : written.status;
        if (outcome === "failed" || outcome === "requeued") {
          const message =
            written.outcome?.kind === "error"
              ? written.outcome.error.message
              : written.statusMessage;
          span.setStatus({ code: SpanStatusCode.ERROR, ...(message && { message }) });
        }
      } else {
        outcome = unwritten;
      }
      span.setAttribute(A.outcome, outcome);
    }
    span.end();
  }
}
