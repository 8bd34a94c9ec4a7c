import type { ToolDefinition } from "@mcp-tasks/core";
import { sleep } from "./sleep.js";
import { textResult } from "./text.js";

/**
 * `generate_report {topic, sections?}`: a realistic long job. Writes one section every
 * `msPerSection`, with a status message per section and a progress report after each (2025-11-25
 * clients that sent a progress token get `notifications/progress`), and stops when cancelled.
 */
export function generateReportTool(msPerSection = 1000): ToolDefinition {
  return {
    name: "generate_report",
    title: "Generate report",
    description: "Writes a multi-section report on a topic; takes a few seconds per report.",
    inputSchema: {
      type: "object",
      properties: {
        topic: { type: "string", description: "What the report is about" },
        sections: { type: "integer", minimum: 1, maximum: 20, description: "How many sections" },
      },
      required: ["topic"],
    },
    taskMode: "optional",
    async run(args, ctx) {
      const topic = String(args.topic);
      const count = Math.min(Math.max(Math.trunc(Number(args.sections ?? 4)) || 4, 1), 20);
      const lines = [`# Report: ${topic}`];
      for (let i = 1; i <= count; i++) {
        await ctx.setStatusMessage(`Writing section ${i} of ${count}`);
        await sleep(msPerSection, ctx.signal);
        lines.push(`## Section ${i}`, `Findings ${i} about ${topic}.`);
        ctx.reportProgress(i, count, `Section ${i} written`);
      }
      await ctx.setStatusMessage(`Finished ${count} sections`);
      return textResult(lines.join("\n"));
    },
  };
}
