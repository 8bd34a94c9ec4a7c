CREATE TABLE "mcp_tasks" (
	"seq" bigint GENERATED ALWAYS AS IDENTITY (sequence name "mcp_tasks_seq_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"id" text PRIMARY KEY NOT NULL,
	"owner_key" text NOT NULL,
	"owner_principal" text,
	"owner_tenant" text,
	"owner_audience" text,
	"era" text NOT NULL,
	"status" text NOT NULL,
	"status_message" text,
	"request" jsonb NOT NULL,
	"result" jsonb,
	"error" jsonb,
	"input_requests" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"input_responses" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"answered_input_keys" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"ttl_ms" bigint,
	"ttl_anchor" text NOT NULL,
	"poll_interval_ms" bigint,
	"created_at" timestamp (3) with time zone NOT NULL,
	"updated_at" timestamp (3) with time zone NOT NULL,
	"expires_at" timestamp (3) with time zone,
	"cancel_requested_at" timestamp (3) with time zone,
	"version" integer DEFAULT 1 NOT NULL,
	"lease_holder" text,
	"lease_expires_at" timestamp (3) with time zone,
	CONSTRAINT "mcp_tasks_status_check" CHECK ("mcp_tasks"."status" IN ('working', 'input_required', 'completed', 'failed', 'cancelled')),
	CONSTRAINT "mcp_tasks_era_check" CHECK ("mcp_tasks"."era" IN ('2025-11-25', '2026-07-28')),
	CONSTRAINT "mcp_tasks_ttl_anchor_check" CHECK ("mcp_tasks"."ttl_anchor" IN ('creation', 'terminal'))
);
--> statement-breakpoint
CREATE INDEX "mcp_tasks_owner_seq_idx" ON "mcp_tasks" USING btree ("owner_key","seq");--> statement-breakpoint
CREATE INDEX "mcp_tasks_expires_idx" ON "mcp_tasks" USING btree ("expires_at") WHERE "mcp_tasks"."expires_at" IS NOT NULL;--> statement-breakpoint
CREATE INDEX "mcp_tasks_lease_idx" ON "mcp_tasks" USING btree ("lease_expires_at") WHERE "mcp_tasks"."lease_expires_at" IS NOT NULL AND "mcp_tasks"."status" IN ('working', 'input_required');