import type { IncomingMessage, ServerResponse } from "node:http";
import type { Owner } from "@mcp-tasks/core";
import type { TasksExtension } from "../extension.js";
import { answerTaskListen, matchTaskListen, SSE_HEADERS } from "../listen-stream.js";
import { writeJson } from "./web-bridge.js";

/**
 * A `subscriptions/listen` for task ids, streamed as Server-Sent Events until the client
 * goes away. Returns `false`, writing nothing, when `body` is not such a request.
 */
export async function serveTaskListen(
  extension: TasksExtension,
  keepAliveMs: number,
  req: IncomingMessage,
  res: ServerResponse,
  owner: Owner,
  body: unknown,
): Promise<boolean> {
  const message = matchTaskListen(body);
  if (message === null) return false;
  const answer = await answerTaskListen(extension, owner, message, keepAliveMs);
  if (answer.kind === "error") {
    writeJson(res, answer.status, answer.body);
    return true;
  }
  res.writeHead(200, SSE_HEADERS);
  res.flushHeaders();
  const gone = new AbortController();
  res.once("close", () => gone.abort());
  req.once("aborted", () => gone.abort());
  answer.start({ signal: gone.signal, write: (frame) => res.write(frame), end: () => res.end() });
  return true;
}
