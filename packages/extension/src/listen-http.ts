import type { Owner } from "@mcp-tasks/core";
import type { TasksExtension } from "./extension.js";
import { answerTaskListen, matchTaskListen, SSE_HEADERS } from "./listen-stream.js";

/** Options of {@link handleTaskListenRequest}. */
export interface TaskListenOptions {
  /** SSE comment keepalive interval; default 15 000 ms, 0 disables. */
  readonly keepAliveMs?: number;
  /** Largest listen body read; default 64 KiB (larger bodies are left to the SDK). */
  readonly maxBodyBytes?: number;
  /**
   * The request body, already parsed by the caller. When given, the request's own body is
   * never read (no clone); without it the body is read from a clone.
   */
  readonly parsedBody?: unknown;
}

async function readBody(request: Request, maxBodyBytes: number): Promise<unknown> {
  if (request.method !== "POST") return undefined;
  const length = Number(request.headers.get("content-length") ?? "0");
  if (length > maxBodyBytes) return undefined;
  try {
    const text = await request.clone().text();
    return text.length > maxBodyBytes ? undefined : JSON.parse(text);
  } catch {
    return undefined;
  }
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
 *
 * On `node:http`, {@link createNodeTasksHandler} serves the same without web streams.
 */
export async function handleTaskListenRequest(
  request: Request,
  extension: TasksExtension,
  owner: Owner,
  options: TaskListenOptions = {},
): Promise<Response | undefined> {
  const body =
    "parsedBody" in options
      ? options.parsedBody
      : await readBody(request, options.maxBodyBytes ?? 64 * 1024);
  const message = matchTaskListen(body);
  if (message === null) return undefined;
  const answer = await answerTaskListen(extension, owner, message, options.keepAliveMs ?? 15_000);
  if (answer.kind === "error") return Response.json(answer.body, { status: answer.status });
  const encoder = new TextEncoder();
  let stop = () => {};
  const stream = new ReadableStream<Uint8Array>({
    start(controller) {
      const cancelled = new AbortController();
      stop = () => cancelled.abort();
      const onAbort = () => cancelled.abort();
      request.signal.addEventListener("abort", onAbort, { once: true });
      answer.start({
        signal: cancelled.signal,
        write(frame) {
          controller.enqueue(encoder.encode(frame));
          return true;
        },
        end() {
          request.signal.removeEventListener("abort", onAbort);
          try {
            controller.close();
          } catch {}
        },
      });
    },
    cancel() {
      stop();
    },
  });
  return new Response(stream, { status: 200, headers: SSE_HEADERS });
}
