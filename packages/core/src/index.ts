/**
 * `@mcp-tasks/core`: the era-neutral task model. No I/O and no protocol era: the task
 * record and its state machine, owner scoping, the store contract, TTL policy, the
 * owner-checking {@link TaskService} and the {@link TaskRunner}.
 *
 * @packageDocumentation
 */
export { ChangeFeed } from "./change-feed.js";
export { type Clock, ManualClock, systemClock } from "./clock.js";
export { decodeCursor, decodeSequenceCursor, encodeCursor } from "./cursor.js";
export {
  isTaskError,
  TASK_ERROR_CODES,
  TaskError,
  type TaskErrorCode,
  taskErrors,
} from "./errors.js";
export { createIdGenerator, type IdGenerator } from "./ids.js";
export {
  ACTIVE_STATUSES,
  assertFreshInputKeys,
  assertIntentAllowed,
  canTransition,
  completeTask,
  expiryOnTerminal,
  failTask,
  INTENT_FROM,
  type Intent,
  isExpired,
  isTerminal,
  markTaskCancelled,
  newTaskRecord,
  requestTaskCancel,
  requireTaskInput,
  type SubmitInputResult,
  setTaskStatusMessage,
  submitTaskInput,
  type TakeInputResult,
  TRANSITIONS,
  takeTaskInputResponses,
  validateNewTask,
} from "./lifecycle.js";
export {
  ANONYMOUS,
  isAnonymous,
  type Owner,
  type OwnerPolicy,
  type OwnerScope,
  owner,
  ownerKey,
  ownerScope,
  sameOwner,
  scopeAllows,
  scopeAllowsKey,
  UNOWNED_KEY,
} from "./owner.js";
export {
  type StartTaskInput,
  TaskCancelledError,
  type TaskContext,
  type TaskHandler,
  type TaskProgress,
  type TaskProgressListener,
  TaskRunner,
  type TaskRunnerOptions,
  toJsonRpcError,
} from "./runner.js";
export {
  type CreateTaskInput,
  type ListTasksInput,
  TaskService,
  type TaskServiceOptions,
} from "./service.js";
export {
  type LeasingTaskStore,
  type ListQuery,
  supportsLeases,
  type TaskChange,
  type TaskChangeKind,
  type TaskChangeListener,
  type TaskPage,
  type TaskStore,
  type Unsubscribe,
} from "./store.js";
export {
  type InputRequest,
  type InputResponse,
  type JsonRpcErrorObject,
  type NewTask,
  TASK_STATUSES,
  type TaskEra,
  type TaskLease,
  type TaskOutcome,
  type TaskRecord,
  type TaskRequest,
  type TaskStatus,
  type TtlAnchor,
} from "./task.js";
export {
  type Preflight,
  type PreflightOutcome,
  TASK_MODES,
  type TaskMode,
  type ToolDefinition,
} from "./tool.js";
export { DEFAULT_TTL_POLICY, resolveTtl, type TtlPolicy, ttlPolicy } from "./ttl.js";
