import {
  type RpcOutcome,
  type TaskRunner,
  type TaskService,
  type ToolDefinition,
  toolRegistry,
} from "@mcp-tasks/core";
import { type Tracer, trace } from "@opentelemetry/api";
import { callTool, type LegacyCallToolResult } from "./handlers/call-tool.js";
import { cancelTask } from "./handlers/cancel-task.js";
import type { LegacyDeps, LegacyRequestContext } from "./handlers/deps.js";
import { getTask } from "./handlers/get-task.js";
import { getTaskResult } from "./handlers/get-task-result.js";
import { listTasks } from "./handlers/list-tasks.js";
import { listTools } from "./handlers/list-tools.js";
import { InputRegistry } from "./input-registry.js";
import {
  LEGACY_TASKS_CAPABILITY,
  type LegacyTask,
  type LegacyTool,
  type ListTasksResult,
} from "./wire.js";

/** What {@link LegacyTaskHandlers} serves. */
export interface LegacyTaskHandlersOptions {
  readonly service: TaskService;
  /** Runs tools as tasks; must wrap the same service. */
  readonly runner: TaskRunner;
  /** The tools served, by unique name. */
  readonly tools: readonly ToolDefinition[];
  /** Shared input bookkeeping; one per node (a fresh one by default). */
  readonly registry?: InputRegistry;
  /**
   * Told about failures whose detail clients do not get: an unreachable store (clients get
   * "temporarily unavailable, retry" with `data.reason: "store_unavailable"`), unexpected
   * errors (clients get `-32603 Internal error`). Default: `console.error`.
   */
  readonly onError?: (error: unknown) => void;
  /**
   * Where the poll spans (`tasks/get`, `tasks/result`) go; default the global provider's
   * `@mcp-tasks/legacy` tracer (a no-op until an OpenTelemetry SDK is installed). Task
   * creation and runs are traced by the core (`TaskServiceOptions.tracer`).
   */
  readonly tracer?: Tracer;
}

/**
 * Every 2025-11-25 tasks method as transport-agnostic handlers, over the core and any
 * store: each takes the {@link LegacyRequestContext} (caller, signal, the request's own
 * stream) and the request's raw `params`, and resolves with the wire result or the
 * JSON-RPC error to answer with. It never throws for a client's mistake.
 */
export class LegacyTaskHandlers {
  readonly service: TaskService;
  readonly runner: TaskRunner;
  readonly registry: InputRegistry;
  readonly #deps: LegacyDeps;

  constructor(options: LegacyTaskHandlersOptions) {
    if (options.runner.service !== options.service) {
      throw new TypeError("the runner must wrap the same TaskService");
    }
    this.service = options.service;
    this.runner = options.runner;
    this.registry = options.registry ?? new InputRegistry();
    // Any node with the same tools can run a task: the runner finds them by name.
    options.runner.register(options.tools);
    this.#deps = {
      service: this.service,
      runner: this.runner,
      tools: toolRegistry(options.tools),
      registry: this.registry,
      onError: options.onError ?? ((error: unknown) => console.error("legacy tasks:", error)),
      tracer: options.tracer ?? trace.getTracer("@mcp-tasks/legacy"),
    };
  }

  /** The server capabilities `initialize` advertises. */
  get capabilities(): { tools: Record<string, never>; tasks: typeof LEGACY_TASKS_CAPABILITY } {
    return { tools: {}, tasks: LEGACY_TASKS_CAPABILITY };
  }

  /** `tools/list`. */
  listTools(): { tools: LegacyTool[] } {
    return listTools(this.#deps);
  }

  /** `tools/call`: a `CreateTaskResult` with `params.task`, else the tool's result. */
  callTool(ctx: LegacyRequestContext, params: unknown): Promise<RpcOutcome<LegacyCallToolResult>> {
    return callTool(this.#deps, ctx, params);
  }

  /** `tasks/get`. */
  getTask(ctx: LegacyRequestContext, params: unknown): Promise<RpcOutcome<LegacyTask>> {
    return getTask(this.#deps, ctx, params);
  }

  /** `tasks/result`: blocks until the task ends. */
  getTaskResult(
    ctx: LegacyRequestContext,
    params: unknown,
  ): Promise<RpcOutcome<Record<string, unknown>>> {
    return getTaskResult(this.#deps, ctx, params);
  }

  /** `tasks/list`. */
  listTasks(ctx: LegacyRequestContext, params: unknown): Promise<RpcOutcome<ListTasksResult>> {
    return listTasks(this.#deps, ctx, params);
  }

  /** `tasks/cancel`: immediate. */
  cancelTask(ctx: LegacyRequestContext, params: unknown): Promise<RpcOutcome<LegacyTask>> {
    return cancelTask(this.#deps, ctx, params);
  }
}
