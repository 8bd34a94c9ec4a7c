import { request } from "node:http";

/** One HTTP request exactly as the fault suite wants to send it (any method, any Host). */
export interface RawRequest {
  readonly method: string;
  readonly path: string;
  /** Sent as given; `host` too (omit it to send `127.0.0.1:port`). */
  readonly headers: Record<string, string>;
  readonly body?: string;
}

/** What came back: `hang` when no status line and headers arrived within the limit. */
export type RawOutcome =
  | {
      readonly kind: "answer";
      readonly status: number;
      readonly headers: Record<string, string | string[] | undefined>;
      /** The body read so far (streams are read for at most `streamMs`, then cut). */
      readonly body: string;
      /** Whether the body ended (false: a stream cut by the reader). */
      readonly ended: boolean;
      /** Whether the answer came before the request's body was all sent (see `splitBodyMs`). */
      readonly answeredMidBody: boolean;
    }
  | { readonly kind: "hang" }
  | { readonly kind: "network"; readonly error: string };

/**
 * Sends `raw` to `url`'s host and port with `node:http` (which, unlike `fetch`, sends any
 * method and any Host header). Resolves `hang` when the status line and headers do not
 * arrive within `headersMs`; reads a body for at most `bodyMs` (a never-ending stream is
 * then cut and reported with `ended: false`). With `splitBodyMs` the body goes in two halves
 * that far apart, as a slow upload would. Never rejects.
 */
export function sendRaw(
  url: string,
  raw: RawRequest,
  limits: { headersMs?: number; bodyMs?: number; splitBodyMs?: number } = {},
): Promise<RawOutcome> {
  const target = new URL(url);
  const headersMs = limits.headersMs ?? 2_000;
  const bodyMs = limits.bodyMs ?? 2_000;
  return new Promise<RawOutcome>((resolve) => {
    let settled = false;
    const finish = (outcome: RawOutcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(headerTimer);
      resolve(outcome);
    };
    const headers: Record<string, string> = { ...raw.headers };
    if (raw.body !== undefined) headers["content-length"] = String(Buffer.byteLength(raw.body));
    let req: ReturnType<typeof request>;
    try {
      req = request({
        host: target.hostname,
        port: Number(target.port),
        method: raw.method,
        path: raw.path,
        headers,
        agent: false,
        setHost: !Object.keys(headers).some((h) => h.toLowerCase() === "host"),
      });
    } catch (error) {
      // The client refused to build the request (an invalid header, say): not the server's.
      resolve({ kind: "network", error: String(error) });
      return;
    }
    const headerTimer = setTimeout(() => {
      req.destroy();
      finish({ kind: "hang" });
    }, headersMs);
    req.on("error", (error) => finish({ kind: "network", error: String(error) }));
    let bodySent = false;
    req.on("response", (res) => {
      const answeredMidBody = !bodySent;
      clearTimeout(headerTimer);
      const chunks: Buffer[] = [];
      let size = 0;
      const done = (ended: boolean) => {
        clearTimeout(bodyTimer);
        finish({
          kind: "answer",
          status: res.statusCode ?? 0,
          headers: res.headers,
          body: Buffer.concat(chunks).toString("utf8"),
          ended,
          answeredMidBody,
        });
        if (!ended) req.destroy();
      };
      const bodyTimer = setTimeout(() => done(false), bodyMs);
      res.on("data", (chunk: Buffer) => {
        // Keep at most 4 MiB: enough to check any answer; a runaway stream is cut.
        if (size < 4 * 1024 * 1024) chunks.push(chunk);
        size += chunk.length;
      });
      res.on("end", () => done(true));
      res.on("error", () => done(false));
      res.on("aborted", () => done(false));
    });
    const split = limits.splitBodyMs;
    if (split === undefined || raw.body === undefined) {
      bodySent = true;
      req.end(raw.body);
      return;
    }
    const half = Math.floor(raw.body.length / 2);
    req.write(raw.body.slice(0, half));
    setTimeout(() => {
      bodySent = true;
      req.end(raw.body?.slice(half));
    }, split);
  });
}
