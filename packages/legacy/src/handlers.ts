import {
  type BoundHandlers,
  bindHandlers,
  type FacadeOptions,
  facadeDeps,
  type TaskRunner,
  type TaskService,
  type ToolDefinition,
} from "@mcp-tasks/core";
import { callTool } from "./handlers/call-tool.js";
import { cancelTask } from "./handlers/cancel-task.js";
import type { LegacyDeps, LegacyRequestContext } from "./handlers/deps.js";
import { getTask } from "./handlers/get-task.js";
import { getTaskResult } from "./handlers/get-task-result.js";
import { listTasks } from "./handlers/list-tasks.js";
import { listTools } from "./handlers/list-tools.js";
import { InputRegistry } from "./input-registry.js";
import { LEGACY_TASKS_CAPABILITY } from "./wire.js";

/** What {@link LegacyTaskHandlers} serves: core's facade settings, and the input registry. */
export interface LegacyTaskHandlersOptions extends FacadeOptions {
  /** Shared input bookkeeping; one per node (a fresh one by default). */
  readonly registry?: InputRegistry;
}

/**
 * Every method of this era, by its handler (`(deps, ctx, params) → outcome`, one per file
 * under `handlers/`), bound to the handlers' dependencies in the constructor.
 */
const HANDLERS = {
  /** `tools/list`. */
  listTools,
  /** `tools/call`: a `CreateTaskResult` with `params.task`, else the tool's result. */
  callTool,
  /** `tasks/get`. */
  getTask,
  /** `tasks/result`: blocks until the task ends. */
  getTaskResult,
  /** `tasks/list`. */
  listTasks,
  /** `tasks/cancel`: immediate. */
  cancelTask,
};

/** The bound methods of {@link LegacyTaskHandlers}. */
export type LegacyTaskMethods = BoundHandlers<typeof HANDLERS>;

// The methods are assigned in the constructor (bindHandlers); this declares them.
export interface LegacyTaskHandlers extends LegacyTaskMethods {}

/**
 * The dependencies a handlers object is bound to, for this package's sessions (their direct
 * answers call the handlers' parts); not published.
 */
export let legacyDepsOf: (handlers: LegacyTaskHandlers) => LegacyDeps;

/**
 * Every 2025-11-25 tasks method as transport-agnostic handlers, over the core and any
 * store: each takes the {@link LegacyRequestContext} (caller, signal, the request's own
 * stream) and the request's raw `params`, and resolves with the wire result or the
 * JSON-RPC error to answer with. It never throws for a client's mistake.
 */
// biome-ignore lint/suspicious/noUnsafeDeclarationMerging: see the interface above.
export class LegacyTaskHandlers {
  readonly service: TaskService;
  readonly runner: TaskRunner;
  readonly registry: InputRegistry;
  readonly #deps: LegacyDeps;

  static {
    legacyDepsOf = (handlers) => handlers.#deps;
  }

  constructor(options: LegacyTaskHandlersOptions) {
    this.registry = options.registry ?? new InputRegistry();
    this.#deps = { ...facadeDeps(options, "@mcp-tasks/legacy"), registry: this.registry };
    this.service = options.service;
    this.runner = options.runner;
    Object.assign(this, bindHandlers(this.#deps, HANDLERS));
  }

  /** The tools, by name. */
  get tools(): ReadonlyMap<string, ToolDefinition> {
    return this.#deps.tools;
  }

  /** The server capabilities `initialize` advertises. */
  get capabilities(): { tools: Record<string, never>; tasks: typeof LEGACY_TASKS_CAPABILITY } {
    return { tools: {}, tasks: LEGACY_TASKS_CAPABILITY };
  }
}
