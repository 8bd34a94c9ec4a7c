import type { IncomingMessage, ServerResponse } from "node:http";
import { isTaskError } from "@mcp-tasks/core";

/**
 * A refusal with an HTTP status and a message for the person at the console. Every input
 * problem becomes one of these (a 4xx), so a bad request never reaches a 500.
 */
export class ConsoleHttpError extends Error {
  readonly status: number;
  /** Extra response headers (e.g. `Retry-After` of a `429`). */
  readonly headers: Readonly<Record<string, string>>;
  constructor(status: number, message: string, headers: Readonly<Record<string, string>> = {}) {
    super(message);
    this.name = "ConsoleHttpError";
    this.status = status;
    this.headers = headers;
  }
}

/** Headers every console response carries: no caching of task data, no framing, no sniffing. */
export const BASE_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  "cache-control": "no-store",
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "x-frame-options": "DENY",
});

/** Sends a JSON body. */
export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    ...BASE_HEADERS,
    "content-type": "application/json; charset=utf-8",
    "content-length": Buffer.byteLength(text),
  });
  res.end(text);
}

/**
 * The HTTP answer for a failure: the console's own refusals as they are, core's task errors
 * by code (missing and foreign tasks alike are 404), anything else a bare 500 (a bug).
 */
export function errorResponse(error: unknown): { status: number; message: string } {
  if (error instanceof ConsoleHttpError) return { status: error.status, message: error.message };
  if (isTaskError(error)) {
    switch (error.code) {
      case "not_found_or_unauthorized":
        return { status: 404, message: "No such task (or it is not yours)." };
      case "invalid_cursor":
        return {
          status: 400,
          message: "That page cursor is not valid; start from the first page.",
        };
      case "invalid_transition":
        return { status: 409, message: error.message };
      case "store_unavailable":
        return { status: 503, message: "The task store is unavailable; try again shortly." };
      default:
        return { status: 400, message: error.message };
    }
  }
  return { status: 500, message: "Internal error" };
}

/** Reads a small JSON request body; 413, 415 or 400 when it is too big, not JSON, or broken. */
export async function readJsonBody(req: IncomingMessage, maxBytes: number): Promise<unknown> {
  const type = String(req.headers["content-type"] ?? "")
    .split(";")[0]!
    .trim()
    .toLowerCase();
  if (type !== "application/json") {
    throw new ConsoleHttpError(415, "Send the request body as application/json.");
  }
  const declared = Number(req.headers["content-length"] ?? "0");
  if (declared > maxBytes) throw new ConsoleHttpError(413, `The body exceeds ${maxBytes} bytes.`);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > maxBytes) throw new ConsoleHttpError(413, `The body exceeds ${maxBytes} bytes.`);
    chunks.push(chunk as Buffer);
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString("utf8"));
  } catch {
    throw new ConsoleHttpError(400, "The body is not valid JSON.");
  }
}

/** A `405`: the method is not one the path takes (the handler sends them as `Allow`). */
export class MethodNotAllowed extends ConsoleHttpError {
  readonly allowed: string;
  constructor(allowed: readonly string[]) {
    super(405, `Use ${allowed.join(" or ")} here.`);
    this.allowed = allowed.join(", ");
  }
}

/** Throws {@link MethodNotAllowed} unless `method` is one of `allowed`. */
export function allow(method: string, ...allowed: string[]): void {
  if (!allowed.includes(method)) throw new MethodNotAllowed(allowed);
}
