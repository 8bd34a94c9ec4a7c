import type { IncomingMessage } from "node:http";
import { nestsDeeperThan } from "./json-depth.js";

/** A request body read once by {@link readJsonBody}. */
export type JsonBody =
  /** Parsed JSON (any value, including arrays for batches). */
  | { readonly kind: "json"; readonly value: unknown }
  /** No body bytes at all (GET, DELETE, an empty POST). */
  | { readonly kind: "empty" }
  /** Bytes that are not JSON; kept so the fallback can answer `-32700` with them. */
  | { readonly kind: "invalid"; readonly text: string }
  /** More than the limit: announced by `Content-Length` or counted while reading. */
  | { readonly kind: "too-large" }
  /** JSON nested deeper than `MAX_JSON_DEPTH` (256): refuse it unparsed (`400`, `-32600`). */
  | { readonly kind: "too-deep" };

const EMPTY: JsonBody = Object.freeze({ kind: "empty" });
const TOO_LARGE: JsonBody = Object.freeze({ kind: "too-large" });
const TOO_DEEP: JsonBody = Object.freeze({ kind: "too-deep" });

/**
 * How much of a body that will not be used is read and thrown away before the answer: a
 * client still sending when the server answers and closes the connection gets a reset
 * (EPIPE) instead of the answer, so the rest is drained first, up to this many bytes or this
 * long. Past either, the answer goes out anyway: a client streaming without end is cut off.
 */
const DRAIN_MAX_BYTES = 64 * 1024 * 1024;
const DRAIN_MAX_MS = 5_000;

/**
 * Reads and throws away the rest of a request body, within bounds (64 MiB, 5 s), and
 * resolves when it has ended, the bounds were reached, or the connection closed. Await it
 * before answering a request whose body is refused unread (a bad Host, a missing token, a
 * body too large), so the client hears the answer instead of a reset. Never rejects.
 */
export function discardBody(req: IncomingMessage): Promise<void> {
  if (req.complete) return Promise.resolve();
  return new Promise((resolve) => {
    let drained = 0;
    const done = () => {
      clearTimeout(timer);
      req.off("data", onData);
      req.off("end", done);
      req.off("error", done);
      req.off("close", done);
      req.resume(); // whatever still comes is discarded
      resolve();
    };
    const onData = (chunk: Buffer) => {
      drained += chunk.length;
      if (drained > DRAIN_MAX_BYTES) done();
    };
    const timer = setTimeout(done, DRAIN_MAX_MS);
    req.on("data", onData);
    req.on("end", done);
    req.on("error", done);
    req.on("close", done);
  });
}

/**
 * Reads a `node:http` request body exactly once, bounded by `maxBytes`, and parses it as
 * JSON. A body announced or found to be larger is not buffered: the rest is drained and
 * discarded (within bounds, so that the client hears the answer), and the result is
 * `too-large` (answer `413` and close the connection). Never rejects for a client's bytes;
 * rejects only when the connection fails mid-body.
 */
export function readJsonBody(req: IncomingMessage, maxBytes: number): Promise<JsonBody> {
  const announced = Number(req.headers["content-length"] ?? Number.NaN);
  if (announced === 0) {
    req.resume();
    return Promise.resolve(EMPTY);
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const overLimit = () => {
      cleanup();
      void discardBody(req).then(() => resolve(TOO_LARGE));
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) {
        chunks.length = 0;
        overLimit();
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => {
      cleanup();
      if (size === 0) return resolve(EMPTY);
      const text = (chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks)).toString(
        "utf8",
      );
      if (nestsDeeperThan(text)) return resolve(TOO_DEEP);
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
    // Announced too large: nothing of it is read into memory, only drained.
    if (announced > maxBytes) return overLimit();
    req.on("data", onData);
    req.on("end", onEnd);
    req.on("error", onError);
    req.on("aborted", onAborted);
  });
}
