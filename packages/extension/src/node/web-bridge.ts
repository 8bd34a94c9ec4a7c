import type { IncomingMessage, ServerResponse } from "node:http";

/**
 * The web-standard `Request` for a `node:http` request whose body has already been read:
 * method, URL and headers, no body (callers hand the parsed body over separately), and a
 * signal that aborts when the client goes away before the response is finished. Used only
 * on the paths that need the SDK's web-standard handlers.
 */
export function webRequestFor(req: IncomingMessage, res: ServerResponse, body?: string): Request {
  const headers = new Headers();
  const raw = req.rawHeaders;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    try {
      headers.append(raw[i] as string, raw[i + 1] as string);
    } catch {
      // A value Node accepted but fetch's Headers refuses: leave it out.
    }
  }
  const controller = new AbortController();
  res.once("close", () => {
    if (!res.writableFinished) controller.abort();
  });
  const method = req.method ?? "GET";
  return new Request(requestUrl(req), {
    method,
    headers,
    signal: controller.signal,
    ...(body !== undefined && method !== "GET" && method !== "HEAD" && { body }),
  });
}

/** `http://<Host><path>`, or `http://localhost<path>` when the Host header forms no URL. */
function requestUrl(req: IncomingMessage): string {
  const path = req.url?.startsWith("/") ? req.url : "/";
  try {
    return new URL(path, `http://${req.headers.host ?? "localhost"}`).href;
  } catch {
    return `http://localhost${path}`;
  }
}

/**
 * Writes a web `Response` to a `node:http` response: status and headers, then the body
 * chunk by chunk with back-pressure. When the first chunk is ready at once it goes out with
 * the headers in one write; an event stream whose first event is not ready yet gets its
 * headers flushed right away, so the client sees it open. A client going away cancels it.
 */
export async function writeWebResponse(res: ServerResponse, response: Response): Promise<void> {
  const headers: Record<string, string | string[]> = {};
  response.headers.forEach((value, key) => {
    headers[key] = value;
  });
  const cookies = response.headers.getSetCookie?.() ?? [];
  if (cookies.length > 0) headers["set-cookie"] = cookies;
  res.writeHead(response.status, headers);
  const body = response.body;
  if (body === null) {
    res.end();
    return;
  }
  const reader = body.getReader();
  const onClose = () => {
    reader.cancel().catch(() => {});
  };
  res.once("close", onClose);
  try {
    let next = reader.read();
    if ((response.headers.get("content-type") ?? "").includes("text/event-stream")) {
      const first = await Promise.race([next, nextTurn()]);
      if (first === NOT_YET) res.flushHeaders();
    }
    for (;;) {
      const { done, value } = await next;
      if (done || res.destroyed) break;
      if (!res.write(value)) await drained(res);
      next = reader.read();
    }
  } catch {
    // The body failed mid-stream: end what was sent.
  } finally {
    res.off("close", onClose);
    res.end();
  }
}

const NOT_YET = Symbol("not yet");

/** Resolves after pending I/O callbacks: what is already queued has had its chance. */
function nextTurn(): Promise<typeof NOT_YET> {
  return new Promise((resolve) => setImmediate(() => resolve(NOT_YET)));
}

function drained(res: ServerResponse): Promise<void> {
  return new Promise<void>((resolve) => {
    const go = () => {
      res.off("drain", go);
      res.off("close", go);
      resolve();
    };
    res.on("drain", go);
    res.on("close", go);
  });
}

/** Writes one JSON value with a `Content-Length`: the whole response in one write. */
export function writeJson(
  res: ServerResponse,
  status: number,
  value: unknown,
  headers?: Readonly<Record<string, string>>,
): void {
  const text = JSON.stringify(value);
  res.writeHead(status, {
    "Content-Type": "application/json",
    "Content-Length": Buffer.byteLength(text),
    ...headers,
  });
  res.end(text);
}
