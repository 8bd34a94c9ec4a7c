/** The `mcp.task.create` span around a task's creation. */

import { SpanKind, type Tracer } from "@opentelemetry/api";
import type { CreateTaskInput } from "./service-options.js";
import type { TaskRecord } from "./task.js";
import { extractTraceContext, type TraceContext } from "./trace-context.js";
import {
  setSpanError,
  setTaskSpanAttributes,
  TASK_SPAN_ATTRIBUTES,
  TASK_SPAN_NAMES,
  traceContextOf,
  withRemoteParent,
} from "./tracing.js";

/**
 * Runs `create` (the store's write of task `taskId`) inside a `mcp.task.create` span: a
 * child of `input.traceContext` (checked: an invalid one is ignored), else of the active
 * context. `create` is given the span's context to store with the task, so the task's runs
 * become children of it; the span ends with the created record, or the error.
 */
export async function createTraced(
  tracer: Tracer,
  taskId: string,
  input: Pick<CreateTaskInput, "era" | "request" | "traceContext">,
  create: (traceContext: TraceContext | null) => Promise<TaskRecord>,
): Promise<TaskRecord> {
  const parent = withRemoteParent(extractTraceContext(input.traceContext));
  const span = tracer.startSpan(TASK_SPAN_NAMES.create, { kind: SpanKind.PRODUCER }, parent);
  if (span.isRecording()) {
    span.setAttribute(TASK_SPAN_ATTRIBUTES.taskId, taskId);
    span.setAttribute(TASK_SPAN_ATTRIBUTES.toolName, input.request.toolName);
    span.setAttribute(TASK_SPAN_ATTRIBUTES.era, input.era);
  }
  try {
    const created = await create(traceContextOf(span));
    setTaskSpanAttributes(span, created);
    return created;
  } catch (error) {
    setSpanError(span, error);
    throw error;
  } finally {
    span.end();
  }
}
