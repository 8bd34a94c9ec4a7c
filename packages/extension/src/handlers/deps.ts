import type { FacadeDeps } from "@mcp-tasks/core";
import type { TasksTool } from "../tool.js";

/** What every handler works on: core's facade dependencies over {@link TasksTool}s. */
export interface HandlerDeps extends FacadeDeps<TasksTool> {}
