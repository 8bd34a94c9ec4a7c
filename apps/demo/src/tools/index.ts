import type { TasksTool } from "@mcp-tasks/extension";
import { confirmDelete } from "./confirm-delete.js";
import { durableJob } from "./durable-job.js";
import { failingJob } from "./failing-job.js";
import { generateReportTool } from "./generate-report.js";
import { greet } from "./greet.js";
import { multiInput } from "./multi-input.js";
import { protocolErrorJob } from "./protocol-error-job.js";
import { slowCompute } from "./slow-compute.js";
import { testToolWithTask } from "./test-tool-with-task.js";

/** The demo's tools: the conformance fixtures plus `generate_report` and `durable_job`. */
export function demoTools(options: { reportMsPerSection?: number } = {}): TasksTool[] {
  return [
    greet,
    slowCompute,
    failingJob,
    protocolErrorJob,
    confirmDelete,
    multiInput,
    testToolWithTask,
    generateReportTool(options.reportMsPerSection),
    durableJob,
  ];
}
