import { type Tracer, trace } from "@opentelemetry/api";
import type { Owner } from "./owner.js";
import type { FailureReporter } from "./rpc.js";
import type { TaskRunner } from "./runner.js";
import type { TaskService } from "./service.js";
import type { TaskRecord } from "./task.js";
import { type ToolDefinition, toolRegistry } from "./tool.js";
import type { TraceContext } from "./trace-context.js";
import { linkSpanToTask, setSpanError, startPollSpan } from "./tracing.js";

/** What an era facade is built from: both facades take these settings. */
export interface FacadeOptions<T extends ToolDefinition = ToolDefinition> {
  /** The owner-checking task service. */
  readonly service: TaskService;
  /** Runs tools as tasks; must wrap the same service. */
  readonly runner: TaskRunner;
  /** The tools served, by unique name. */
  readonly tools: readonly T[];
  /**
   * Told about failures whose detail clients do not get: an unreachable store (clients get
   * "temporarily unavailable, retry" with `data.reason: "store_unavailable"`), unexpected
   * errors (clients get `-32603 Internal error`). Default: `console.error`.
   */
  readonly onError?: FailureReporter;
  /**
   * Where the facade's poll spans go; default the global provider's tracer named after the
   * facade (a no-op until an OpenTelemetry SDK is installed). Task creation and runs are
   * traced by the core (`TaskServiceOptions.tracer`).
   */
  readonly tracer?: Tracer;
}

/** What every handler of a facade works on. */
export interface FacadeDeps<T extends ToolDefinition = ToolDefinition> {
  readonly service: TaskService;
  readonly runner: TaskRunner;
  /** The tools by name. */
  readonly tools: ReadonlyMap<string, T>;
  /** Told about failures whose detail the client does not get (e.g. an unreachable store). */
  readonly onError: FailureReporter;
  /** Where the poll spans go. */
  readonly tracer: Tracer;
}

/**
 * A facade's dependencies from its settings, checked once: the runner must wrap the same
 * service, tool names must be unique, and the tools are registered with the runner (any
 * node with the same tools can run a task: the runner finds them by name). `name` (the
 * facade's package) names its tracer and prefixes what the default `onError` prints.
 */
export function facadeDeps<T extends ToolDefinition>(
  options: FacadeOptions<T>,
  name: string,
): FacadeDeps<T> {
  if (options.runner.service !== options.service) {
    throw new TypeError("the runner must wrap the same TaskService");
  }
  const tools = toolRegistry(options.tools) as ReadonlyMap<string, T>;
  options.runner.register(options.tools);
  return {
    service: options.service,
    runner: options.runner,
    tools,
    onError: options.onError ?? ((error: unknown) => console.error(`${name}:`, error)),
    tracer: options.tracer ?? trace.getTracer(name),
  };
}

/**
 * A facade's handlers bound to its dependencies: each `(deps, ...args) => R` of `H` becomes
 * `(...args) => R`, keeping its name.
 */
export type BoundHandlers<H> = {
  readonly [K in keyof H]: H[K] extends (deps: never, ...args: infer A) => infer R
    ? (...args: A) => R
    : never;
};

/**
 * Binds a facade's per-method handlers (`(deps, ctx, params) → outcome`, one per file) to
 * its dependencies, so that the facade's class is the table of its methods rather than a
 * forwarding method per handler. Both era facades are built this way.
 */
export function bindHandlers<D, H extends Record<keyof H, (deps: D, ...args: never[]) => unknown>>(
  deps: D,
  handlers: H,
): BoundHandlers<H> {
  const bound: Record<string, (...args: never[]) => unknown> = {};
  for (const [name, handler] of Object.entries(handlers) as [
    string,
    (deps: D, ...args: never[]) => unknown,
  ][]) {
    bound[name] = (...args) => handler(deps, ...args);
  }
  return bound as BoundHandlers<H>;
}

/**
 * A poll's read of one task (`tasks/get` of either era), in the poll's short span: a child
 * of the request's own trace context (`incoming`), linked to the task's trace once read,
 * marked failed when the read throws (a missing task, an unreachable store), ended either
 * way. Answers the record, as `service.get` does.
 */
export async function pollTask(
  deps: Pick<FacadeDeps, "service" | "tracer">,
  method: string,
  owner: Owner,
  taskId: string,
  incoming: TraceContext | null,
): Promise<TaskRecord> {
  const span = startPollSpan(deps.tracer, method, incoming);
  try {
    const task = await deps.service.get(owner, taskId);
    linkSpanToTask(span, task);
    return task;
  } catch (error) {
    setSpanError(span, error);
    throw error;
  } finally {
    span.end();
  }
}
