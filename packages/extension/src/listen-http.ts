import type { Owner } from "@mcp-tasks/core";
import { isRpcError } from "@mcp-tasks/core";
import {
  CLIENT_CAPABILITIES_META_KEY,
  MODERN_PROTOCOL_VERSION,
  PROTOCOL_VERSION_META_KEY,
} from "./constants.js";
import { RPC_ERROR } from "./errors.js";
import type { TasksExtension } from "./extension.js";
import { asksForTaskIds, type StreamNotification } from "./handlers/listen.js";

/** Options of {@link handleTaskListenRequest}. */
export interface TaskListenOptions {
  /** SSE comment keepalive interval; default 15 000 ms, 0 disables. */
  readonly keepAliveMs?: number;
  /** Largest listen body read; default 64 KiB (larger bodies are left to the SDK). */
  readonly maxBodyBytes?: number;
}

interface ListenMessage {
  id: string | number;
  params: Record<string, unknown>;
}

async function readListen(request: Request, maxBodyBytes: number): Promise<ListenMessage | null> {
  if (request.method !== "POST") return null;
  const length = Number(request.headers.get("content-length") ?? "0");
  if (length > maxBodyBytes) return null;
  let body: unknown;
  try {
    const text = await request.clone().text();
    if (text.length > maxBodyBytes) return null;
    body = JSON.parse(text);
  } catch {
    return null;
  }
  if (typeof body !== "object" || body === null || Array.isArray(body)) return null;
  const { method, id, params } = body as { method?: unknown; id?: unknown; params?: unknown };
  if (method !== "subscriptions/listen") return null;
  if (typeof id !== "string" && typeof id !== "number") return null;
  if (!asksForTaskIds(params)) return null;
  const meta = (params as { _meta?: Record<string, unknown> })._meta;
  if (meta?.[PROTOCOL_VERSION_META_KEY] !== MODERN_PROTOCOL_VERSION) return null;
  return { id, params: params as Record<string, unknown> };
}

/**
 * Serves a 2026-07-28 `subscriptions/listen` that asks for `taskIds`, which the SDK's listen
 * router does not know. Call it before the SDK handler: it resolves `undefined` for every
 * other request (leaving the body unread), or the response: a JSON-RPC error (`-32021`
 * without the extension, `-32602` when any id is not the caller's task), or an SSE stream
 * that starts with `notifications/subscriptions/acknowledged` (echoing the task ids) and
 * carries `notifications/tasks` with the full DetailedTask, each tagged with the
 * subscription id. The stream ends (with the listen result) once every subscribed task has
 * been reported terminal, or when the client disconnects.
 */
export async function handleTaskListenRequest(
  request: Request,
  extension: TasksExtension,
  owner: Owner,
  options: TaskListenOptions = {},
): Promise<Response | undefined> {
  const message = await readListen(request, options.maxBodyBytes ?? 64 * 1024);
  if (message === null) return undefined;
  const meta = message.params._meta as Record<string, unknown>;
  const ctx = { owner, clientCapabilities: meta[CLIENT_CAPABILITIES_META_KEY] };
  const authorized = await extension.authorizeSubscription(ctx, message.params);
  if (isRpcError(authorized)) {
    const status =
      authorized.error.code === RPC_ERROR.MISSING_REQUIRED_CLIENT_CAPABILITY ? 400 : 200;
    return Response.json({ jsonrpc: "2.0", id: message.id, error: authorized.error }, { status });
  }

  const encoder = new TextEncoder();
  const keepAliveMs = options.keepAliveMs ?? 15_000;
  let closed = false;
  let finish: (graceful: boolean) => void = () => {};
  const stream = new ReadableStream<Uint8Array>({
    start(controller) {
      const write = (frame: string) => {
        if (closed) return;
        try {
          controller.enqueue(encoder.encode(frame));
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
      const keepAlive =
        keepAliveMs > 0 ? setInterval(() => write(": keepalive\n\n"), keepAliveMs) : undefined;
      keepAlive?.unref?.();
      const onAbort = () => finish(false);
      finish = (graceful) => {
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
        request.signal.removeEventListener("abort", onAbort);
        try {
          controller.close();
        } catch {}
      };
      request.signal.addEventListener("abort", onAbort, { once: true });
      send(subscription.acknowledgement());
      subscription.start();
    },
    cancel() {
      finish(false);
    },
  });
  return new Response(stream, {
    status: 200,
    headers: {
      "Content-Type": "text/event-stream",
      "Cache-Control": "no-cache, no-transform",
      Connection: "keep-alive",
      "X-Accel-Buffering": "no",
    },
  });
}
