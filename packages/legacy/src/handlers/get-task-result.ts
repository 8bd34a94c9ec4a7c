import {
  isTerminal,
  linkSpanToTask,
  type RpcOutcome,
  requestTraceContext,
  setSpanError,
  setTaskSpanAttributes,
  startPollSpan,
  type TaskRecord,
  toOutcome,
} from "@mcp-tasks/core";
import type { DeliveryChannel } from "../delivery-channel.js";
import { internalError, legacyFailure } from "../errors.js";
import { InputPump } from "../input-pump.js";
import { toLegacyPayload } from "../projection.js";
import { TaskIdParamsSchema } from "../wire.js";
import { type LegacyDeps, type LegacyRequestContext, parseParams } from "./deps.js";

/**
 * `tasks/result`: blocks until the task is terminal (following it through the store's
 * change feed, and through brief store outages), then answers exactly the original result
 * with related-task `_meta`, or the original JSON-RPC error. While it waits, pending input
 * requests are sent on the request's own channel. Answers `-32603` when `ctx.signal`
 * aborts (client gone).
 */
export function getTaskResult(
  deps: LegacyDeps,
  ctx: LegacyRequestContext,
  params: unknown,
): Promise<RpcOutcome<Record<string, unknown>>> {
  return toOutcome(
    async () => {
      const incoming = requestTraceContext(params, ctx.traceContext);
      const span = startPollSpan(deps.tracer, "tasks/result", incoming);
      let linked = false;
      let input: ResultChannel | undefined;
      try {
        const { taskId } = parseParams(TaskIdParamsSchema, params, "tasks/result");
        const options = ctx.signal === undefined ? {} : { signal: ctx.signal };
        for await (const record of deps.service.follow(ctx.owner, taskId, options)) {
          if (!linked) linkSpanToTask(span, record);
          linked = true;
          if (isTerminal(record.status)) {
            setTaskSpanAttributes(span, record);
            deps.registry.forget(taskId);
            return toLegacyPayload(record);
          }
          if (ctx.channel !== undefined)
            input ??= new ResultChannel(deps, ctx, taskId, ctx.channel);
          input?.offer(record);
        }
        // `follow` only ends after a terminal record, answered above.
        throw internalError(`Task ${taskId} stopped reporting before it ended`);
      } catch (error) {
        setSpanError(span, error);
        if (ctx.signal?.aborted) throw internalError("The tasks/result request was aborted");
        throw error;
      } finally {
        input?.close();
        span.end();
      }
    },
    (error) => legacyFailure(error, deps.onError),
  );
}

/**
 * A `tasks/result` stream serving its task's input requests: registered so the session
 * stream stands back while it is open, and re-offering the latest record when another
 * channel gives a request back (its stream closed), so the request is sent here instead.
 */
class ResultChannel {
  readonly #pump: InputPump;
  readonly #close: () => void;
  readonly #unlisten: () => void;
  #latest: TaskRecord | undefined;

  constructor(
    deps: LegacyDeps,
    ctx: LegacyRequestContext,
    taskId: string,
    channel: DeliveryChannel,
  ) {
    this.#pump = new InputPump(deps.service, deps.registry, ctx.owner, taskId, channel);
    this.#close = deps.registry.openResultChannel(taskId, channel);
    this.#unlisten = deps.registry.onChange((id) => {
      if (id === taskId && this.#latest !== undefined) this.#pump.offer(this.#latest);
    });
  }

  offer(record: TaskRecord): void {
    this.#latest = record;
    this.#pump.offer(record);
  }

  close(): void {
    this.#unlisten();
    this.#close();
  }
}
