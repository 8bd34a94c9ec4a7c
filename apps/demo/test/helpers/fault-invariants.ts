import type { RawOutcome } from "./raw-http.js";

/**
 * Stack frames, source locations and absolute paths: none may reach a client. (A JSON-RPC
 * body quoting a client's own input back would not match these unless the input did.)
 */
const LEAK =
  /(?:\n|\\n)\s+at [^\n]*[:(]|\(?(?:file:\/\/|\/(?:work|home|root|usr|tmp|opt|var|srv)\/)[^\s"]*|node_modules|\.(?:ts|js|mjs|cjs):\d+/;

function isId(value: unknown): boolean {
  return value === null || typeof value === "string" || typeof value === "number";
}

/** Why `message` is not a well-formed JSON-RPC 2.0 message, or `undefined` when it is. */
export function jsonRpcProblem(message: unknown): string | undefined {
  if (typeof message !== "object" || message === null || Array.isArray(message)) {
    return "not a JSON object";
  }
  const m = message as Record<string, unknown>;
  if (m.jsonrpc !== "2.0") return 'jsonrpc is not "2.0"';
  if (typeof m.method === "string") {
    // A request or notification (SSE streams carry these).
    if ("id" in m && !isId(m.id)) return "request id of a bad type";
    return undefined;
  }
  if (!("id" in m) || !isId(m.id)) return "response without a valid id";
  const hasResult = "result" in m;
  const hasError = "error" in m;
  if (hasResult === hasError) return "response with both or neither of result and error";
  if (hasResult) {
    return typeof m.result === "object" && m.result !== null ? undefined : "result not an object";
  }
  const error = m.error as Record<string, unknown> | null;
  if (typeof error !== "object" || error === null) return "error not an object";
  if (!Number.isInteger(error.code)) return "error.code not an integer";
  if (typeof error.message !== "string") return "error.message not a string";
  return undefined;
}

/** The complete `data:` payloads of an SSE body (a cut last event is left out). */
function sseData(body: string, ended: boolean): string[] {
  const events = body.split(/\r?\n\r?\n/);
  if (!ended) events.pop();
  const data: string[] = [];
  for (const event of events) {
    const lines = event
      .split(/\r?\n/)
      .filter((line) => line.startsWith("data:"))
      .map((line) => line.slice(5).replace(/^ /, ""));
    if (lines.length > 0) data.push(lines.join("\n"));
  }
  return data;
}

/**
 * Every invariant one answer must keep: an answer (status line and headers) within the
 * limit, never 5xx, never a connection dropped without an answer, JSON bodies that parse as
 * JSON-RPC 2.0 messages (or batches of them), SSE events likewise, and no stack trace or
 * path anywhere. Returns the violations (empty when none).
 * `jsonRpcBodies: false` for routes that are not the MCP endpoint (their JSON is not RPC).
 */
export function violations(
  outcome: RawOutcome,
  options: { jsonRpcBodies?: boolean; echoes?: readonly string[] } = {},
) {
  const found: string[] = [];
  if (outcome.kind === "hang") return ["no status line and headers within the limit"];
  if (outcome.kind === "network") return [`no answer: ${outcome.error}`];
  if (outcome.status >= 500) found.push(`HTTP ${outcome.status}`);
  // What the client sent may come back quoted (e.g. a refused Origin): that is no leak.
  let scanned = outcome.body;
  for (const echo of options.echoes ?? []) {
    if (echo.length >= 3) scanned = scanned.split(echo).join("");
  }
  if (LEAK.test(scanned)) found.push(`stack or path in the body: ${outcome.body.slice(0, 300)}`);
  const type = String(outcome.headers["content-type"] ?? "");
  const checkRpc = options.jsonRpcBodies ?? true;
  if (type.includes("application/json") && outcome.ended && outcome.body.trim() !== "") {
    let parsed: unknown;
    try {
      parsed = JSON.parse(outcome.body);
    } catch {
      found.push(`JSON body that does not parse: ${outcome.body.slice(0, 200)}`);
      return found;
    }
    if (checkRpc) {
      const messages = Array.isArray(parsed) ? parsed : [parsed];
      if (Array.isArray(parsed) && parsed.length === 0) found.push("empty JSON-RPC batch");
      for (const message of messages) {
        const problem = jsonRpcProblem(message);
        if (problem) found.push(`${problem}: ${JSON.stringify(message).slice(0, 200)}`);
      }
    }
  } else if (type.includes("text/event-stream")) {
    for (const data of sseData(outcome.body, outcome.ended)) {
      let parsed: unknown;
      try {
        parsed = JSON.parse(data);
      } catch {
        found.push(`SSE data that does not parse: ${data.slice(0, 200)}`);
        continue;
      }
      const problem = jsonRpcProblem(parsed);
      if (problem) found.push(`SSE ${problem}: ${data.slice(0, 200)}`);
    }
  }
  return found;
}

/** The error of a JSON(-RPC) answer or of the SSE event answering `id`, if any. */
export function rpcAnswer(
  outcome: RawOutcome,
  id?: unknown,
): { result?: Record<string, unknown>; error?: { code: number; message: string; data?: unknown } } {
  if (outcome.kind !== "answer") return {};
  const type = String(outcome.headers["content-type"] ?? "");
  try {
    if (type.includes("text/event-stream")) {
      for (const data of sseData(outcome.body, outcome.ended)) {
        const message = JSON.parse(data);
        if ("id" in message && (id === undefined || message.id === id)) return message;
      }
      return {};
    }
    return JSON.parse(outcome.body);
  } catch {
    return {};
  }
}
