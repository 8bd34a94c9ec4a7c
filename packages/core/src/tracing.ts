import {
  type Context,
  context,
  createTraceState,
  isSpanContextValid,
  type Span,
  type SpanContext,
  SpanKind,
  type SpanOptions,
  SpanStatusCode,
  type Tracer,
  trace,
} from "@opentelemetry/api";
import type { TaskRecord } from "./task.js";
import type { TraceContext } from "./trace-context.js";

/**
 * The span attribute names every task span carries (the creation, each run, each poll), so
 * one query finds everything about a task: `mcp.task.id`, `mcp.tool.name`, `mcp.era`,
 * `mcp.task.status`; runs add the attempt and the worker.
 */
export const TASK_SPAN_ATTRIBUTES = Object.freeze({
  taskId: "mcp.task.id",
  toolName: "mcp.tool.name",
  era: "mcp.era",
  status: "mcp.task.status",
  attempt: "mcp.task.attempt",
  worker: "mcp.task.worker",
  /** How a run ended: `completed`, `failed`, `cancelled`, `requeued`, or why it stopped. */
  outcome: "mcp.task.outcome",
} as const);

const A = TASK_SPAN_ATTRIBUTES;

/** The instrumentation scope of the core's spans (creation and runs). */
const CORE_TRACER_NAME = "@mcp-tasks/core";

/**
 * The core's default tracer: the global provider's, which is a no-op until the application
 * installs an OpenTelemetry SDK (the libraries depend on `@opentelemetry/api` only).
 */
export function coreTracer(): Tracer {
  return trace.getTracer(CORE_TRACER_NAME);
}

/** The remote span context a stored {@link TraceContext} names. */
export function remoteSpanContext(stored: TraceContext): SpanContext {
  // parseTraceparent normalized it: 00-<trace id>-<span id>-<flags>.
  const { traceparent, tracestate } = stored;
  return {
    traceId: traceparent.slice(3, 35),
    spanId: traceparent.slice(36, 52),
    traceFlags: Number.parseInt(traceparent.slice(53, 55), 16),
    isRemote: true,
    ...(tracestate !== undefined && { traceState: createTraceState(tracestate) }),
  };
}

/**
 * `base` with the stored context as its parent span, or `base` unchanged when there is
 * none: a span started in the result continues the stored trace.
 */
export function withRemoteParent(
  stored: TraceContext | null | undefined,
  base: Context = context.active(),
): Context {
  return stored ? trace.setSpanContext(base, remoteSpanContext(stored)) : base;
}

/**
 * The W3C form of a span's context, to store with a task so that its runs continue the
 * trace: `null` when the span has no valid context (no SDK and no incoming trace).
 */
export function traceContextOf(span: Span): TraceContext | null {
  const spanContext = span.spanContext();
  if (!isSpanContextValid(spanContext)) return null;
  const flags = (spanContext.traceFlags & 0xff).toString(16).padStart(2, "0");
  const traceparent = `00-${spanContext.traceId}-${spanContext.spanId}-${flags}`;
  const tracestate = spanContext.traceState?.serialize();
  return tracestate ? { traceparent, tracestate } : { traceparent };
}

/**
 * Sets the four task attributes on a recording span; nothing (and no allocation) on a
 * non-recording one, which is every span while no SDK is installed.
 */
export function setTaskSpanAttributes(span: Span, task: TaskRecord): void {
  if (!span.isRecording()) return;
  span.setAttribute(A.taskId, task.taskId);
  span.setAttribute(A.toolName, task.request.toolName);
  span.setAttribute(A.era, task.era);
  span.setAttribute(A.status, task.status);
}

/**
 * Links a recording span (a poll) to the trace the task was created in, and sets the task
 * attributes; nothing on a non-recording span.
 */
export function linkSpanToTask(span: Span, task: TaskRecord): void {
  if (!span.isRecording()) return;
  setTaskSpanAttributes(span, task);
  if (task.traceContext !== null) span.addLink({ context: remoteSpanContext(task.traceContext) });
}

/** The names of the core's spans. */
export const TASK_SPAN_NAMES = Object.freeze({
  /** A task's creation, in the creating request's trace. */
  create: "mcp.task.create",
  /** One run (attempt) of a task, a child of its creation. */
  run: "mcp.task.run",
} as const);

/** Marks a span failed with `error`'s message; nothing on a non-recording span. */
export function setSpanError(span: Span, error: unknown): void {
  if (!span.isRecording()) return;
  const message =
    error instanceof Error ? error.message : typeof error === "string" ? error : "error";
  span.setStatus({ code: SpanStatusCode.ERROR, message });
}

const POLL_SPAN_OPTIONS: SpanOptions = Object.freeze({ kind: SpanKind.SERVER });

/**
 * Starts the short span of a poll (`tasks/get`, `tasks/result`), named after its method and
 * a child of the poll request's own trace context (else of the active context). Once the
 * task is read, {@link linkSpanToTask} links it to the task's trace. Cheap without an SDK:
 * no options or attribute objects are built.
 */
export function startPollSpan(tracer: Tracer, method: string, incoming: TraceContext | null): Span {
  const span = tracer.startSpan(method, POLL_SPAN_OPTIONS, withRemoteParent(incoming));
  if (span.isRecording()) span.setAttribute("mcp.method.name", method);
  return span;
}
