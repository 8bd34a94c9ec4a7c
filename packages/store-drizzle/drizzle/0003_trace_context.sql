ALTER TABLE "mcp_tasks" ADD COLUMN "traceparent" text;--> statement-breakpoint
ALTER TABLE "mcp_tasks" ADD COLUMN "tracestate" text;