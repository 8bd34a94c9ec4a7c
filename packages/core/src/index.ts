/**
 * `@mcp-tasks/core`: the era-neutral task model, for application code. No I/O and no
 * protocol era: the owner-checking {@link TaskService} and the {@link TaskRunner}, the task
 * record and its statuses, owners, the closed error vocabulary, tool definitions, the
 * janitor, TTL policy, clocks and ids, and the `TaskStore` interface with its change-feed
 * types (enough to accept a store or watch one).
 *
 * Store authors find the lifecycle functions, owner scopes, cursors and the change feed in
 * `@mcp-tasks/core/store`, and the contract suite in `@mcp-tasks/core/testing`. Each name
 * is exported by exactly one of the three entries.
 *
 * @packageDocumentation
 */
export { type Clock, ManualClock, systemClock } from "./clock.js";
export {
  clientViewOf,
  isTaskError,
  STORE_RETRY_AFTER_MS,
  STORE_UNAVAILABLE_MESSAGE,
  type StoreQuota,
  type StoreQuotaHit,
  TASK_ERROR_CODES,
  TaskError,
  type TaskErrorCode,
  type TaskErrorData,
} from "./errors.js";
export {
  type OwnerLimits,
  QUEUE_AHEAD_COUNT_LIMIT,
  QUEUED_OWNER_LIMIT_MESSAGE,
  queuedAheadMessage,
} from "./fairness.js";
export type { FollowOptions, TaskSubscriber } from "./follow.js";
export {
  type BoundHandlers,
  bindHandlers,
  type FacadeDeps,
  type FacadeOptions,
  facadeDeps,
  pollTask,
} from "./handlers.js";
export { createIdGenerator, type IdGenerator } from "./ids.js";
export { isoTime } from "./iso-time.js";
export {
  type JanitorOptions,
  type JanitorSweep,
  type Sweepable,
  startJanitor,
} from "./janitor.js";
export type { SubmitInputResult, TakeInputResult } from "./lifecycle.js";
export type { ListNewestInput } from "./listing.js";
export { OperatorView, type OperatorViewOptions } from "./operator-view.js";
export {
  ANONYMOUS,
  isAnonymous,
  type Owner,
  type OwnerPolicy,
  owner,
  sameOwner,
} from "./owner.js";
export type { ClaimOptions, OrphanSweep } from "./queue-store.js";
export {
  type FailureMapping,
  type FailureReporter,
  failureMapping,
  isRpcError,
  RpcError,
  type RpcOutcome,
  toOutcome,
} from "./rpc.js";
export { toJsonRpcError } from "./run-outcome.js";
export { RunStoppedError, TaskCancelledError } from "./run-stop.js";
export type { RunWriter } from "./run-writer.js";
export { TaskRunner } from "./runner.js";
export type { RunnerStats, StartTaskInput, TaskRunnerOptions } from "./runner-options.js";
export { TaskService } from "./service.js";
export type { CreateTaskInput, ListTasksInput, TaskServiceOptions } from "./service-options.js";
export type {
  TaskChange,
  TaskChangeKind,
  TaskChangeListener,
  TaskPage,
  TaskStore,
  Unsubscribe,
} from "./store.js";
export {
  type CancelMode,
  cancelModeOf,
  DEFAULT_EXECUTION_POLICY,
  type ExecutionPolicy,
  type Fence,
  type InputRequest,
  type InputResponse,
  type JsonRpcErrorObject,
  TASK_STATUSES,
  type TaskEra,
  type TaskExecution,
  type TaskLease,
  type TaskOutcome,
  type TaskRecord,
  type TaskRequest,
  type TaskStatus,
  type TtlAnchor,
} from "./task.js";
export type {
  TaskContext,
  TaskHandler,
  TaskProgress,
  TaskProgressListener,
} from "./task-context.js";
export {
  executionPolicyOf,
  listedToolFields,
  type Preflight,
  type PreflightOutcome,
  TASK_MODES,
  type TaskMode,
  type ToolDefinition,
  type ToolExecution,
  toolRegistry,
} from "./tool.js";
export {
  extractTraceContext,
  parseTraceparent,
  parseTracestate,
  requestTraceContext,
  type TraceContext,
  toTraceContext,
} from "./trace-context.js";
export {
  coreTracer,
  linkSpanToTask,
  remoteSpanContext,
  setSpanError,
  setTaskSpanAttributes,
  startPollSpan,
  TASK_SPAN_ATTRIBUTES,
  TASK_SPAN_NAMES,
  traceContextOf,
  withRemoteParent,
} from "./tracing.js";
export { isTerminal } from "./transitions.js";
export { DEFAULT_TTL_POLICY, type TtlPolicy } from "./ttl.js";
