import {
  type BoundHandlers,
  bindHandlers,
  type FacadeOptions,
  facadeDeps,
  type RpcOutcome,
  type TaskRunner,
  type TaskService,
} from "@mcp-tasks/core";
import { methodNotFound } from "./errors.js";
import { callTool } from "./handlers/call-tool.js";
import { cancelTask } from "./handlers/cancel-task.js";
import type { HandlerDeps } from "./handlers/deps.js";
import { getTask } from "./handlers/get-task.js";
import { listTools } from "./handlers/list-tools.js";
import { authorizeTaskSubscription, subscribeToTasks } from "./handlers/listen.js";
import { updateTask } from "./handlers/update-task.js";
import type { TasksRequestContext } from "./request.js";
import type { TasksTool } from "./tool.js";

/** Settings of a {@link TasksExtension}: core's facade settings over {@link TasksTool}s. */
export interface TasksExtensionOptions extends FacadeOptions<TasksTool> {}

/**
 * Every method of this era, by its handler (`(deps, ctx, params) → outcome`, one per file
 * under `handlers/`), bound to the extension's dependencies in its constructor.
 */
const HANDLERS = {
  /** `tools/list`. */
  listTools,
  /** `tools/call`: a task, an ephemeral `input_required` round, or a plain result. */
  callTool,
  /** `tasks/get`. */
  getTask,
  /** `tasks/update`. */
  updateTask,
  /** `tasks/cancel`: cooperative. */
  cancelTask,
  /** Authorizes the `taskIds` of a `subscriptions/listen`, before acknowledging it. */
  authorizeSubscription: authorizeTaskSubscription,
  /** Creates the push side of an authorized subscription. */
  subscription: subscribeToTasks,
};

/** The bound methods of a {@link TasksExtension}. */
export type TasksExtensionMethods = BoundHandlers<typeof HANDLERS>;

// The methods are assigned in the constructor (bindHandlers); this declares them.
export interface TasksExtension extends TasksExtensionMethods {}

/**
 * The dependencies an extension's handlers are bound to, for this package's node handler
 * (its direct answers call the handlers' parts); not published.
 */
export let handlerDepsOf: (extension: TasksExtension) => HandlerDeps;

/**
 * The 2026-07-28 tasks extension (`io.modelcontextprotocol/tasks`) as transport-agnostic
 * handlers: each takes the {@link TasksRequestContext} (caller, declared capabilities,
 * routing header) and the request params, and resolves with a result or the JSON-RPC error
 * to answer with. It never throws for a client's mistake.
 *
 * Bind it to an SDK server with {@link bindTasksExtension}; serve `taskIds` subscriptions
 * with {@link handleTaskListenRequest}.
 */
// biome-ignore lint/suspicious/noUnsafeDeclarationMerging: see the interface above.
export class TasksExtension {
  readonly service: TaskService;
  readonly runner: TaskRunner;
  readonly #deps: HandlerDeps;

  static {
    handlerDepsOf = (extension) => extension.#deps;
  }

  constructor(options: TasksExtensionOptions) {
    this.#deps = facadeDeps(options, "@mcp-tasks/extension");
    this.service = options.service;
    this.runner = options.runner;
    Object.assign(this, bindHandlers(this.#deps, HANDLERS));
  }

  /** The tools, by name. */
  get tools(): ReadonlyMap<string, TasksTool> {
    return this.#deps.tools;
  }

  /** `tasks/result` and `tasks/list` do not exist in this era: `-32601`. */
  removedMethod(method: "tasks/result" | "tasks/list"): RpcOutcome<never> {
    return { error: methodNotFound(method).toJSON() };
  }
}
