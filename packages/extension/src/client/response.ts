import type { JsonRpcErrorObject, JsonValue } from "./types.js";

/** One JSON-RPC message as it came off the wire (only the keys a response uses). */
interface WireMessage {
  readonly id?: unknown;
  readonly result?: JsonValue;
  readonly error?: JsonRpcErrorObject;
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** The response answering `id` among `messages` (a batch-free body or SSE events), if any. */
function answerTo(messages: readonly unknown[], id: number): WireMessage | undefined {
  for (const message of messages) {
    if (!isObject(message) || !("result" in message || "error" in message)) continue;
    // A server that could not read the request at all answers with `id: null`.
    if (message.id === id || message.id === null) return message as WireMessage;
  }
  return undefined;
}

/** The JSON of one SSE event's `data` lines, or `undefined` for a comment-only event. */
function eventData(block: string): unknown {
  const data: string[] = [];
  for (const line of block.split(/\r?\n/)) {
    if (line.startsWith("data:")) data.push(line.slice(line.startsWith("data: ") ? 6 : 5));
  }
  return data.length === 0 ? undefined : JSON.parse(data.join("\n"));
}

/**
 * Reads an SSE body event by event and stops (cancelling the rest of the stream) at the
 * response to `id`: a server may send notifications first and keep the stream open after.
 */
async function readEventStream(
  body: ReadableStream<Uint8Array>,
  id: number,
): Promise<WireMessage | undefined> {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  let buffered = "";
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (value !== undefined) buffered += value;
      const blocks = buffered.split(/\r?\n\r?\n/);
      buffered = done ? "" : (blocks.pop() ?? "");
      const answer = answerTo(blocks.map(eventData), id);
      if (answer !== undefined || done) return answer;
    }
  } finally {
    await reader.cancel().catch(() => {});
  }
}

/**
 * The JSON-RPC message answering request `id` in an HTTP response: a JSON body or an SSE
 * stream. `undefined` when the body holds no such message (e.g. a bare `401`).
 */
export async function readAnswer(response: Response, id: number): Promise<WireMessage | undefined> {
  const type = response.headers.get("content-type") ?? "";
  if (type.includes("text/event-stream") && response.body !== null) {
    return readEventStream(response.body, id);
  }
  const text = await response.text();
  if (!type.includes("json") || text.trim() === "") return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return undefined;
  }
  return answerTo(Array.isArray(parsed) ? parsed : [parsed], id);
}
