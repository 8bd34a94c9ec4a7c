import type { IncomingMessage } from "node:http";

/** A request body read once by {@link readJsonBody}. */
export type JsonBody =
  /** Parsed JSON (any value, including arrays for batches). */
  | { readonly kind: "json"; readonly value: unknown }
  /** No body bytes at all (GET, DELETE, an empty POST). */
  | { readonly kind: "empty" }
  /** Bytes that are not JSON; kept so the fallback can answer `-32700` with them. */
  | { readonly kind: "invalid"; readonly text: string }
  /** More than the limit: announced by `Content-Length` or counted while reading. */
  | { readonly kind: "too-large" };

const EMPTY: JsonBody = Object.freeze({ kind: "empty" });
const TOO_LARGE: JsonBody = Object.freeze({ kind: "too-large" });

/**
 * Reads a `node:http` request body exactly once, bounded by `maxBytes`, and parses it as
 * JSON. A body announced or found to be larger is not buffered: the rest is drained and
 * discarded, and the result is `too-large` (answer `413`). Never rejects for a client's
 * bytes; rejects only when the connection fails mid-body.
 */
export function readJsonBody(req: IncomingMessage, maxBytes: number): Promise<JsonBody> {
  const announced = Number(req.headers["content-length"] ?? Number.NaN);
  if (announced > maxBytes) {
    req.resume();
    return Promise.resolve(TOO_LARGE);
  }
  if (announced === 0) {
    req.resume();
    return Promise.resolve(EMPTY);
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let tooLarge = false;
    const onData = (chunk: Buffer) => {
      if (tooLarge) return;
      size += chunk.length;
      if (size > maxBytes) {
        tooLarge = true;
        chunks.length = 0;
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => {
      cleanup();
      if (tooLarge) return resolve(TOO_LARGE);
      if (size === 0) return resolve(EMPTY);
      const text = (chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks)).toString(
        "utf8",
      );
      try {
        resolve({ kind: "json", value: JSON.parse(text) });
      } catch {
        resolve({ kind: "invalid", text });
      }
    };
    const onError = (error: Error) => {
      cleanup();
      reject(error);
    };
    const onAborted = () => onError(new Error("the client went away before the body ended"));
    const cleanup = () => {
      req.off("data", onData);
      req.off("end", onEnd);
      req.off("error", onError);
      req.off("aborted", onAborted);
    };
    req.on("data", onData);
    req.on("end", onEnd);
    req.on("error", onError);
    req.on("aborted", onAborted);
  });
}
