import type { TaskRunner, TaskService } from "@mcp-tasks/core";
import type { TasksTool } from "../tool.js";

/** What every handler works on. */
export interface HandlerDeps {
  readonly service: TaskService;
  readonly runner: TaskRunner;
  readonly tools: ReadonlyMap<string, TasksTool>;
}
