import { randomUUID } from "node:crypto";
import {
  type InputRequest,
  type InputResponse,
  isTaskError,
  isTerminal,
  type Owner,
  type TaskContext,
  type TaskRecord,
  type TaskRunner,
  type TaskService,
  type ToolDefinition,
  toJsonRpcError,
} from "@mcp-tasks/core";
import type { z } from "zod";
import { JSONRPC, LegacyRpcError, rpc } from "./errors.js";
import { type DeliveryChannel, followTask, InputPump, InputRegistry } from "./input-bridge.js";
import { legacyStatusOf, toLegacyPayload, toLegacyTask, toLegacyTool } from "./projection.js";
import {
  type CallToolParams,
  CallToolParamsSchema,
  type CreateTaskResult,
  LEGACY_TASKS_CAPABILITY,
  type LegacyTask,
  type LegacyTool,
  ListTasksParamsSchema,
  type ListTasksResult,
  SIDE_REQUEST_CAPABILITY,
  SIDE_REQUEST_METHODS,
  type SideRequestMethod,
  TaskIdParamsSchema,
} from "./wire.js";

/** What {@link LegacyTaskHandlers} serves. */
export interface LegacyTaskHandlersOptions {
  readonly service: TaskService;
  readonly runner: TaskRunner;
  readonly tools: readonly ToolDefinition[];
  /** Shared input bookkeeping; one per node (a fresh one by default). */
  readonly registry?: InputRegistry;
}

/** Per-request context a binding passes in. */
export interface LegacyRequestContext {
  /** Aborted when the request is cancelled or its client goes away. */
  readonly signal?: AbortSignal;
  /** The request's own stream, for side requests (`tasks/result`, synchronous `tools/call`). */
  readonly channel?: DeliveryChannel;
}

/** A `tools/call` answer: the tool's result, or a `CreateTaskResult` for a task. */
export type LegacyCallToolResult = Record<string, unknown> | CreateTaskResult;

function parse<S extends z.ZodType>(schema: S, params: unknown, method: string): z.infer<S> {
  const parsed = schema.safeParse(params);
  if (!parsed.success) {
    throw new LegacyRpcError(
      JSONRPC.INVALID_PARAMS,
      `Invalid params for ${method}: ${parsed.error.issues.map((i) => `${i.path.join(".") || "params"}: ${i.message}`).join("; ")}`,
    );
  }
  return parsed.data;
}

/** Bounds a preflight that never proceeds. */
const MAX_PREFLIGHT_ROUNDS = 10;

function isSideRequestMethod(method: string): method is SideRequestMethod {
  return (SIDE_REQUEST_METHODS as readonly string[]).includes(method);
}

/**
 * Transport-agnostic handlers for every 2025-11-25 tasks method, over the core and any
 * store. Each method takes the caller (an {@link Owner}) and the request's raw `params`,
 * returns the wire result, and throws {@link LegacyRpcError} for JSON-RPC errors.
 */
export class LegacyTaskHandlers {
  readonly service: TaskService;
  readonly runner: TaskRunner;
  readonly registry: InputRegistry;
  readonly #tools: ReadonlyMap<string, ToolDefinition>;

  constructor(options: LegacyTaskHandlersOptions) {
    this.service = options.service;
    this.runner = options.runner;
    this.registry = options.registry ?? new InputRegistry();
    const tools = new Map<string, ToolDefinition>();
    for (const tool of options.tools) {
      if (tools.has(tool.name)) throw new TypeError(`Duplicate tool name: ${tool.name}`);
      tools.set(tool.name, tool);
    }
    this.#tools = tools;
  }

  /** The server capabilities `initialize` advertises. */
  get capabilities(): { tools: Record<string, never>; tasks: typeof LEGACY_TASKS_CAPABILITY } {
    return { tools: {}, tasks: LEGACY_TASKS_CAPABILITY };
  }

  /** `tools/list`: every tool with `execution.taskSupport` projected from its task mode. */
  listTools(): { tools: LegacyTool[] } {
    return { tools: [...this.#tools.values()].map(toLegacyTool) };
  }

  /**
   * `tools/call`. With `params.task` on a tool that allows tasks: starts the task and
   * answers `{ task }` (the requested `ttl` honoured within the TTL policy). Without it on
   * a tool that allows synchronous calls: runs the tool and answers its result.
   * `required` without `task` and `forbidden` with it answer `-32601`.
   */
  async callTool(
    owner: Owner,
    params: unknown,
    context: LegacyRequestContext = {},
  ): Promise<LegacyCallToolResult> {
    const call = parse(CallToolParamsSchema, params, "tools/call");
    const tool = this.#tools.get(call.name);
    if (tool === undefined) {
      throw new LegacyRpcError(JSONRPC.INVALID_PARAMS, `Unknown tool: ${call.name}`);
    }
    if (call.task !== undefined && tool.taskMode === "never") {
      throw new LegacyRpcError(
        JSONRPC.METHOD_NOT_FOUND,
        `Tool ${tool.name} does not support task augmentation (taskSupport: 'forbidden')`,
      );
    }
    if (call.task === undefined && tool.taskMode === "always") {
      throw new LegacyRpcError(
        JSONRPC.METHOD_NOT_FOUND,
        `Tool ${tool.name} requires task augmentation (taskSupport: 'required')`,
      );
    }
    const args = await this.#preflight(tool, call.arguments ?? {}, context);
    const ready: CallToolParams = { ...call, arguments: args };
    if (call.task !== undefined) {
      const task = await this.startTask(owner, tool, ready);
      return { task: toLegacyTask(task) };
    }
    return this.#runSynchronously(owner, tool, ready, context);
  }

  /**
   * Runs the tool's preflight, if any, before a task exists: its input requests go to the
   * client as plain side requests on the `tools/call` stream (no task to relate them to),
   * round after round, until it proceeds with the arguments to use.
   */
  async #preflight(
    tool: ToolDefinition,
    args: Readonly<Record<string, unknown>>,
    context: LegacyRequestContext,
  ): Promise<Record<string, unknown>> {
    if (tool.preflight === undefined) return { ...args };
    const answers: Record<string, unknown> = {};
    for (let round = 0; round < MAX_PREFLIGHT_ROUNDS; round++) {
      const outcome = await tool.preflight(args, answers);
      if (outcome.kind === "proceed") return { ...outcome.arguments };
      for (const [key, request] of Object.entries(outcome.inputRequests)) {
        answers[key] = await this.#ask(request, context);
      }
    }
    throw new LegacyRpcError(
      JSONRPC.INTERNAL_ERROR,
      `Tool ${tool.name} asked for input more than ${MAX_PREFLIGHT_ROUNDS} times`,
    );
  }

  /** One side request on the request's own stream, gated on the declared capabilities. */
  #ask(request: InputRequest, context: LegacyRequestContext): Promise<Record<string, unknown>> {
    const channel = context.channel;
    if (
      channel === undefined ||
      !isSideRequestMethod(request.method) ||
      channel.clientCapabilities?.[SIDE_REQUEST_CAPABILITY[request.method]] === undefined
    ) {
      throw new LegacyRpcError(
        JSONRPC.INTERNAL_ERROR,
        `Input request ${request.method} cannot be sent to this client`,
      );
    }
    return channel.send(
      { method: request.method, params: { ...request.params } },
      context.signal ?? channel.signal,
    );
  }

  /** Starts `tool` as a task for `owner`; the binding tracks it afterwards. */
  startTask(owner: Owner, tool: ToolDefinition, call: CallToolParams): Promise<TaskRecord> {
    return rpc(() =>
      this.runner.start(owner, {
        era: "2025-11-25",
        request: { toolName: tool.name, arguments: call.arguments ?? {} },
        ...(call.task?.ttl !== undefined && { ttlMs: call.task.ttl }),
        handler: tool.run,
      }),
    );
  }

  /** `tasks/get`: the task; `-32602` for unknown and foreign ids alike. */
  async getTask(owner: Owner, params: unknown): Promise<LegacyTask> {
    const { taskId } = parse(TaskIdParamsSchema, params, "tasks/get");
    return toLegacyTask(await rpc(() => this.service.get(owner, taskId)));
  }

  /**
   * `tasks/result`: blocks until the task is terminal (woken by the store's change feed),
   * then answers exactly the original result with related-task `_meta`, or throws the
   * original JSON-RPC error. While it waits, pending input requests are sent on the
   * request's own channel. Rejects when `context.signal` aborts (client gone).
   */
  async getTaskResult(
    owner: Owner,
    params: unknown,
    context: LegacyRequestContext = {},
  ): Promise<Record<string, unknown>> {
    const { taskId } = parse(TaskIdParamsSchema, params, "tasks/result");
    const first = await rpc(() => this.service.get(owner, taskId));
    if (isTerminal(first.status)) return toLegacyPayload(first);
    const { channel, signal } = context;
    let closeChannel: (() => void) | undefined;
    let follower: { refresh(): void; stop(): void } | undefined;
    if (channel !== undefined) {
      const pump = new InputPump(this.service, this.registry, owner, taskId, channel);
      closeChannel = this.registry.openResultChannel(taskId, channel);
      const following = followTask(this.service, owner, taskId, (record) => pump.offer(record));
      // A key released by another channel (its stream closed) is ours to send now.
      const unlisten = this.registry.onChange((id) => {
        if (id === taskId) following.refresh();
      });
      follower = {
        refresh: following.refresh,
        stop: () => {
          unlisten();
          following.stop();
        },
      };
      pump.offer(first);
    }
    try {
      const done = await rpc(() =>
        this.service.waitFor(owner, taskId, (task) => isTerminal(task.status), {
          ...(signal !== undefined && { signal }),
        }),
      ).catch((error: unknown) => {
        if (signal?.aborted) {
          throw new LegacyRpcError(JSONRPC.INTERNAL_ERROR, "The tasks/result request was aborted");
        }
        throw error;
      });
      this.registry.forget(taskId);
      return toLegacyPayload(done);
    } finally {
      follower?.stop();
      closeChannel?.();
    }
  }

  /** `tasks/list`: the caller's tasks, oldest first, with an opaque cursor. */
  async listTasks(owner: Owner, params: unknown): Promise<ListTasksResult> {
    const parsed = parse(ListTasksParamsSchema, params, "tasks/list");
    const page = await rpc(() =>
      this.service.list(owner, parsed?.cursor !== undefined ? { cursor: parsed.cursor } : {}),
    );
    return {
      tasks: page.tasks.map(toLegacyTask),
      ...(page.nextCursor !== undefined && { nextCursor: page.nextCursor }),
    };
  }

  /**
   * `tasks/cancel`: the task is `cancelled` before the reply (the handler's signal fires
   * and its late outcome is discarded); `-32602` on a terminal, unknown or foreign task.
   */
  async cancelTask(owner: Owner, params: unknown): Promise<LegacyTask> {
    const { taskId } = parse(TaskIdParamsSchema, params, "tasks/cancel");
    return toLegacyTask(await rpc(() => this.#cancel(owner, taskId)));
  }

  async #cancel(owner: Owner, taskId: string): Promise<TaskRecord> {
    try {
      // One atomic write: the task is cancelled (and the request recorded) or it was terminal.
      return await this.service.cancelNow(owner, taskId, "The task was cancelled by request.");
    } catch (error) {
      if (!isTaskError(error, "invalid_transition")) throw error;
      const after = await this.service.get(owner, taskId);
      throw new LegacyRpcError(
        JSONRPC.INVALID_PARAMS,
        `Cannot cancel task: already in terminal status '${legacyStatusOf(after)}'`,
      );
    }
  }

  async #runSynchronously(
    owner: Owner,
    tool: ToolDefinition,
    call: CallToolParams,
    context: LegacyRequestContext,
  ): Promise<Record<string, unknown>> {
    const signal = context.signal ?? new AbortController().signal;
    const ask = (request: InputRequest) => this.#ask(request, { ...context, signal });
    const ctx: TaskContext = {
      // A synchronous call has no task; the id only names the run.
      taskId: `sync-${randomUUID()}`,
      owner,
      signal,
      async requireInput(requests) {
        const out: Record<string, InputResponse> = {};
        for (const [name, request] of Object.entries(requests)) {
          out[name] = await ask(request);
        }
        return out;
      },
      async setStatusMessage() {},
      reportProgress() {},
    };
    try {
      const result = await tool.run(call.arguments ?? {}, ctx);
      if (typeof result !== "object" || result === null || Array.isArray(result)) {
        throw new Error("The tool handler returned no result object");
      }
      return { ...result };
    } catch (error) {
      if (error instanceof LegacyRpcError) throw error;
      throw LegacyRpcError.from(toJsonRpcError(error));
    }
  }
}
