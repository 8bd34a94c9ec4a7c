/** The settings of a {@link TaskService} and what its callers pass it. */

import type { Tracer } from "@opentelemetry/api";
import type { OwnerLimits } from "./fairness.js";
import type { IdGenerator } from "./ids.js";
import type { TaskStore } from "./store.js";
import type {
  ExecutionPolicy,
  NewTask,
  TaskEra,
  TaskLease,
  TaskRequest,
  TaskStatus,
} from "./task.js";
import type { TraceContext } from "./trace-context.js";
import type { TtlPolicy } from "./ttl.js";

/** Settings of a {@link TaskService}. Everything with a default is optional. */
export interface TaskServiceOptions {
  readonly store: TaskStore;
  /** See {@link OwnerPolicy.requireOwner}; default `false`. */
  readonly requireOwner?: boolean;
  /** Retention policy; default {@link DEFAULT_TTL_POLICY}. */
  readonly ttl?: Partial<TtlPolicy>;
  /** Suggested polling interval for new tasks; default 1000 ms, `null` for none. */
  readonly pollIntervalMs?: number | null;
  /** Task id source; default 128-bit CSPRNG ids. */
  readonly ids?: IdGenerator;
  /** Page size when the caller names none; default 50. */
  readonly defaultPageSize?: number;
  /** The largest page handed out; default 100. */
  readonly maxPageSize?: number;
  /**
   * While waiting on the change feed, re-read the task this often anyway, in case a change
   * notification was lost (e.g. across a database reconnect). Default 30 s; 0 disables.
   */
  readonly waitRecheckMs?: number;
  /**
   * Where the creation spans go, and the runs' unless the runner is given its own; default
   * the global provider's `@mcp-tasks/core` tracer (a no-op until an OpenTelemetry SDK is
   * installed).
   */
  readonly tracer?: Tracer;
}

/** What a caller asks for when creating a task. */
export interface CreateTaskInput {
  readonly era: TaskEra;
  readonly request: TaskRequest;
  /** Requested ttl: `undefined` for the default, `null` for unlimited (subject to policy). */
  readonly ttlMs?: number | null;
  readonly statusMessage?: string | null;
  /** The lease a worker takes with the create; see {@link NewTask.lease}. */
  readonly lease?: TaskLease;
  /** The queue's per-owner limits; see {@link NewTask.ownerLimits}. */
  readonly ownerLimits?: OwnerLimits;
  /** How the task may be executed (retries, deadline); default one run, no deadline. */
  readonly execution?: Partial<ExecutionPolicy>;
  /**
   * The W3C trace context of the creating request (`traceparent` / `tracestate` from its
   * `_meta` or HTTP headers): the creation span is its child, and the task's runs continue
   * the trace. Checked here: an invalid value is ignored.
   */
  readonly traceContext?: TraceContext | null;
}

/** What a caller asks for when listing. */
export interface ListTasksInput {
  readonly statuses?: readonly TaskStatus[];
  readonly cursor?: string;
  readonly limit?: number;
}

/** What the service decides for a task it creates (the rest comes from the caller). */
export interface ServiceDecisions {
  readonly taskId: string;
  readonly ttlMs: number | null;
  readonly ttlAnchor: NewTask["ttlAnchor"];
  readonly pollIntervalMs: number | null;
  /** The creation span's context, stored with the task (none without a tracer). */
  readonly traceContext: TraceContext | null;
}

/** The store's new task for a caller's {@link CreateTaskInput}. */
export function newTaskOf(input: CreateTaskInput, decided: ServiceDecisions): NewTask {
  // Named one by one rather than spread: this runs on every create.
  return {
    taskId: decided.taskId,
    ttlMs: decided.ttlMs,
    ttlAnchor: decided.ttlAnchor,
    pollIntervalMs: decided.pollIntervalMs,
    traceContext: decided.traceContext,
    era: input.era,
    request: input.request,
    // Left out under owner limits: a task created queued then says why it waits.
    ...((input.statusMessage !== undefined || input.ownerLimits === undefined) && {
      statusMessage: input.statusMessage ?? null,
    }),
    ...(input.lease !== undefined && { lease: input.lease }),
    ...(input.ownerLimits !== undefined && { ownerLimits: input.ownerLimits }),
    ...(input.execution !== undefined && { execution: input.execution }),
  };
}
