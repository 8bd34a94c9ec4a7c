import { type RpcOutcome, type TaskRunner, type TaskService, toolRegistry } from "@mcp-tasks/core";
import { type Tracer, trace } from "@opentelemetry/api";
import { methodNotFound } from "./errors.js";
import { type CallToolOutcome, callTool } from "./handlers/call-tool.js";
import { cancelTask } from "./handlers/cancel-task.js";
import type { HandlerDeps } from "./handlers/deps.js";
import { getTask } from "./handlers/get-task.js";
import { listTools } from "./handlers/list-tools.js";
import {
  authorizeTaskSubscription,
  subscribeToTasks,
  type TaskSubscription,
  type TaskSubscriptionOptions,
} from "./handlers/listen.js";
import { updateTask } from "./handlers/update-task.js";
import type { TasksRequestContext } from "./request.js";
import type { AckResult, GetTaskResult } from "./schemas.js";
import type { TasksTool, WireTool } from "./tool.js";

/** Settings of a {@link TasksExtension}. */
export interface TasksExtensionOptions {
  /** The owner-checking task service. */
  readonly service: TaskService;
  /** Runs tools as tasks; must wrap the same service. */
  readonly runner: TaskRunner;
  /** The tools served, by unique name. */
  readonly tools: readonly TasksTool[];
  /**
   * Told about failures whose detail clients do not get: an unreachable store (clients get
   * "temporarily unavailable, retry" with `data.reason: "store_unavailable"`), unexpected
   * errors (clients get `-32603 Internal error`). Default: `console.error`.
   */
  readonly onError?: (error: unknown) => void;
  /**
   * Where the poll spans (`tasks/get`) go; default the global provider's
   * `@mcp-tasks/extension` tracer (a no-op until an OpenTelemetry SDK is installed). Task
   * creation and runs are traced by the core (`TaskServiceOptions.tracer`).
   */
  readonly tracer?: Tracer;
}

/**
 * The 2026-07-28 tasks extension (`io.modelcontextprotocol/tasks`) as transport-agnostic
 * handlers: each takes the {@link TasksRequestContext} (caller, declared capabilities,
 * routing header) and the request params, and resolves with a result or the JSON-RPC error
 * to answer with. It never throws for a client's mistake.
 *
 * Bind it to an SDK server with {@link bindTasksExtension}; serve `taskIds` subscriptions
 * with {@link handleTaskListenRequest}.
 */
export class TasksExtension {
  readonly service: TaskService;
  readonly runner: TaskRunner;
  readonly #deps: HandlerDeps;

  constructor(options: TasksExtensionOptions) {
    if (options.runner.service !== options.service) {
      throw new TypeError("the runner must wrap the same TaskService");
    }
    const tools = toolRegistry(options.tools);
    // Any node with the same tools can run a task: the runner finds them by name.
    options.runner.register(options.tools);
    this.service = options.service;
    this.runner = options.runner;
    const onError =
      options.onError ?? ((error: unknown) => console.error("tasks extension:", error));
    const tracer = options.tracer ?? trace.getTracer("@mcp-tasks/extension");
    this.#deps = { service: options.service, runner: options.runner, tools, onError, tracer };
  }

  /** The tools, by name. */
  get tools(): ReadonlyMap<string, TasksTool> {
    return this.#deps.tools;
  }

  /** `tools/list`. */
  listTools(): { tools: WireTool[] } {
    return listTools(this.#deps);
  }

  /** `tools/call`: a task, an ephemeral `input_required` round, or a plain result. */
  callTool(ctx: TasksRequestContext, params: unknown): Promise<RpcOutcome<CallToolOutcome>> {
    return callTool(this.#deps, ctx, params);
  }

  /** `tasks/get`. */
  getTask(ctx: TasksRequestContext, params: unknown): Promise<RpcOutcome<GetTaskResult>> {
    return getTask(this.#deps, ctx, params);
  }

  /** `tasks/update`. */
  updateTask(ctx: TasksRequestContext, params: unknown): Promise<RpcOutcome<AckResult>> {
    return updateTask(this.#deps, ctx, params);
  }

  /** `tasks/cancel`. */
  cancelTask(ctx: TasksRequestContext, params: unknown): Promise<RpcOutcome<AckResult>> {
    return cancelTask(this.#deps, ctx, params);
  }

  /** `tasks/result` and `tasks/list` do not exist in this era: `-32601`. */
  removedMethod(method: "tasks/result" | "tasks/list"): RpcOutcome<never> {
    return { error: methodNotFound(method).toJSON() };
  }

  /** Authorizes the `taskIds` of a `subscriptions/listen`, before acknowledging it. */
  authorizeSubscription(
    ctx: TasksRequestContext,
    params: unknown,
  ): Promise<RpcOutcome<{ taskIds: string[] }>> {
    return authorizeTaskSubscription(this.#deps, ctx, params);
  }

  /** Creates the push side of an authorized subscription. */
  subscription(options: TaskSubscriptionOptions): TaskSubscription {
    return subscribeToTasks(this.#deps, options);
  }
}
