import type { Owner } from "@mcp-tasks/core";
import { isRpcError, type JsonRpcErrorObject } from "@mcp-tasks/core";
import {
  CLIENT_CAPABILITIES_META_KEY,
  MODERN_PROTOCOL_VERSION,
  PROTOCOL_VERSION_META_KEY,
} from "./constants.js";
import { RPC_ERROR } from "./errors.js";
import type { TasksExtension } from "./extension.js";
import { asksForTaskIds, type StreamNotification } from "./handlers/listen.js";

/** A 2026-07-28 `subscriptions/listen` request asking for `taskIds`. */
export interface TaskListenMessage {
  readonly id: string | number;
  readonly params: Record<string, unknown>;
}

/** The response headers of a listen stream. */
export const SSE_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  "Content-Type": "text/event-stream",
  "Cache-Control": "no-cache, no-transform",
  Connection: "keep-alive",
  "X-Accel-Buffering": "no",
});

/**
 * The parsed body as a `subscriptions/listen` for task ids (2026-07-28 envelope, an id),
 * or `null` for every other message, which the SDK then serves.
 */
export function matchTaskListen(body: unknown): TaskListenMessage | null {
  if (typeof body !== "object" || body === null || Array.isArray(body)) return null;
  const { method, id, params } = body as { method?: unknown; id?: unknown; params?: unknown };
  if (method !== "subscriptions/listen") return null;
  if (typeof id !== "string" && typeof id !== "number") return null;
  if (!asksForTaskIds(params)) return null;
  const meta = (params as { _meta?: Record<string, unknown> })._meta;
  if (meta?.[PROTOCOL_VERSION_META_KEY] !== MODERN_PROTOCOL_VERSION) return null;
  return { id, params: params as Record<string, unknown> };
}

/** How a listen answers: a JSON-RPC error with its HTTP status, or a stream to start. */
export type TaskListenAnswer =
  | { readonly kind: "error"; readonly status: number; readonly body: unknown }
  | { readonly kind: "stream"; start(sink: ListenSink): void };

/** Where a listen stream writes; `end` closes the response. */
export interface ListenSink {
  write(frame: string): boolean | undefined;
  end(): void;
  /** Aborts when the client goes away. */
  readonly signal: AbortSignal;
}

/**
 * Authorizes a task listen and prepares its stream: `-32021` without the extension (400),
 * `-32602` when any id is not the caller's task (200), else a stream that starts with
 * `notifications/subscriptions/acknowledged` and carries `notifications/tasks`, ending with
 * the listen result once every subscribed task has been reported terminal.
 */
export async function answerTaskListen(
  extension: TasksExtension,
  owner: Owner,
  message: TaskListenMessage,
  keepAliveMs: number,
): Promise<TaskListenAnswer> {
  const meta = message.params._meta as Record<string, unknown>;
  const ctx = { owner, clientCapabilities: meta[CLIENT_CAPABILITIES_META_KEY] };
  const authorized = await extension.authorizeSubscription(ctx, message.params);
  if (isRpcError(authorized)) {
    const error: JsonRpcErrorObject = authorized.error;
    const status = error.code === RPC_ERROR.MISSING_REQUIRED_CLIENT_CAPABILITY ? 400 : 200;
    return { kind: "error", status, body: { jsonrpc: "2.0", id: message.id, error } };
  }
  return {
    kind: "stream",
    start(sink) {
      let closed = false;
      let keepAlive: ReturnType<typeof setInterval> | undefined;
      const write = (frame: string) => {
        if (closed) return;
        try {
          sink.write(frame);
        } catch {
          finish(false);
        }
      };
      const send = (notification: StreamNotification) =>
        write(`event: message\ndata: ${JSON.stringify({ jsonrpc: "2.0", ...notification })}\n\n`);
      const subscription = extension.subscription({
        ctx,
        taskIds: authorized.result.taskIds,
        subscriptionId: message.id,
        send,
        onAllTerminal: () => queueMicrotask(() => finish(true)),
      });
      const onAbort = () => finish(false);
      function finish(graceful: boolean) {
        if (closed) return;
        if (graceful) {
          write(
            `event: message\ndata: ${JSON.stringify({
              jsonrpc: "2.0",
              id: message.id,
              result: { resultType: "complete" },
            })}\n\n`,
          );
        }
        closed = true;
        subscription.close();
        if (keepAlive !== undefined) clearInterval(keepAlive);
        sink.signal.removeEventListener("abort", onAbort);
        try {
          sink.end();
        } catch {}
      }
      if (sink.signal.aborted) return finish(false);
      sink.signal.addEventListener("abort", onAbort, { once: true });
      if (keepAliveMs > 0) {
        keepAlive = setInterval(() => write(": keepalive\n\n"), keepAliveMs);
        keepAlive.unref?.();
      }
      send(subscription.acknowledgement());
      subscription.start();
    },
  };
}
