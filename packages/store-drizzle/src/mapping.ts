import {
  type InputRequest,
  type InputResponse,
  type JsonRpcErrorObject,
  type TaskEra,
  type TaskOutcome,
  type TaskRecord,
  type TaskStatus,
  type TtlAnchor,
  toTraceContext,
} from "@mcp-tasks/core";
import type { Row } from "./executor.js";

const EMPTY: Readonly<Record<string, never>> = Object.freeze({});

function num(value: unknown): number | null {
  if (value === null || value === undefined) return null;
  return typeof value === "number" ? value : Number(value);
}

function json<T>(value: unknown, fallback: T): T {
  if (value === null || value === undefined) return fallback;
  // Both drivers parse jsonb already; a string means a driver configured not to.
  return (typeof value === "string" ? JSON.parse(value) : value) as T;
}

/** A row selected with the statements' column list → the era-neutral record. */
export function toRecord(row: Row): TaskRecord {
  const result = json<Record<string, unknown> | null>(row.result, null);
  const error = json<JsonRpcErrorObject | null>(row.error, null);
  const outcome: TaskOutcome | null =
    result !== null ? { kind: "result", result } : error !== null ? { kind: "error", error } : null;
  return {
    taskId: row.id as string,
    status: row.status as TaskStatus,
    statusMessage: (row.status_message as string | null) ?? null,
    createdAt: num(row.created_at)!,
    lastUpdatedAt: num(row.updated_at)!,
    ttlMs: num(row.ttl_ms),
    ttlAnchor: row.ttl_anchor as TtlAnchor,
    expiresAt: num(row.expires_at),
    pollIntervalMs: num(row.poll_interval_ms),
    owner: {
      principalId: (row.owner_principal as string | null) ?? null,
      tenantId: (row.owner_tenant as string | null) ?? null,
      audience: (row.owner_audience as string | null) ?? null,
    },
    era: row.era as TaskEra,
    request: json(row.request, { toolName: "", arguments: {} }),
    outcome,
    inputRequests: json<Record<string, InputRequest>>(row.input_requests, EMPTY),
    inputResponses: json<Record<string, InputResponse>>(row.input_responses, EMPTY),
    answeredInputKeys: json<string[]>(row.answered_input_keys, []),
    inputAnswers: json<Record<string, InputResponse>>(row.input_answers, EMPTY),
    cancelRequestedAt: num(row.cancel_requested_at),
    execution: {
      maxAttempts: num(row.max_attempts)!,
      backoffMs: num(row.backoff_ms)!,
      retryOnError: row.retry_on_error === true,
      deadlineMs: num(row.deadline_ms),
      attempt: num(row.attempt)!,
      holder: (row.lease_holder as string | null) ?? null,
      fencingToken: num(row.fencing_token)!,
      leaseExpiresAt: num(row.lease_expires_at),
      availableAt: num(row.available_at),
    },
    // Checked again on the way out: the column may have been written by hand.
    traceContext: toTraceContext(row.traceparent, row.tracestate),
    version: num(row.version)!,
  };
}
