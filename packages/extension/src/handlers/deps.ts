import type { FailureReporter, TaskRunner, TaskService } from "@mcp-tasks/core";
import type { Tracer } from "@opentelemetry/api";
import type { TasksTool } from "../tool.js";

/** What every handler works on. */
export interface HandlerDeps {
  readonly service: TaskService;
  readonly runner: TaskRunner;
  readonly tools: ReadonlyMap<string, TasksTool>;
  /** Told about failures whose detail the client does not get (e.g. an unreachable store). */
  readonly onError: FailureReporter;
  /** Where the poll spans (`tasks/get`) go. */
  readonly tracer: Tracer;
}
