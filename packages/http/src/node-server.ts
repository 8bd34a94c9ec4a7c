import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";

/** Timeouts of {@link createTasksHttpServer}. */
export interface TasksHttpServerOptions {
  /** Longest wait for a request's headers (`server.headersTimeout`); default 10 000 ms. */
  readonly headersTimeoutMs?: number;
  /**
   * Longest wait for a whole request, headers and body (`server.requestTimeout`), as a
   * backstop to the endpoint's own body timeout; default 60 000 ms. It bounds only what the
   * client sends: a response (an SSE stream) may stay open as long as it needs.
   */
  readonly requestTimeoutMs?: number;
  /** Idle time before a kept-alive connection is closed (`server.keepAliveTimeout`); default 5 000 ms. */
  readonly keepAliveTimeoutMs?: number;
  /**
   * How often Node checks the header and request timeouts (`connectionsCheckingInterval`);
   * default Node's 30 000 ms: a timeout fires up to this much late.
   */
  readonly connectionsCheckingIntervalMs?: number;
}

/**
 * A `node:http` server for a request listener (e.g. `endpoint.listener`), with bounded
 * header and request timeouts: a client sending its headers or body a byte at a time is cut
 * off instead of holding a connection forever. Listening is the caller's
 * (`server.listen(3000, "127.0.0.1")`).
 */
export function createTasksHttpServer(
  listener: (req: IncomingMessage, res: ServerResponse) => void,
  options: TasksHttpServerOptions = {},
): Server {
  const server =
    options.connectionsCheckingIntervalMs === undefined
      ? createServer(listener)
      : createServer(
          { connectionsCheckingInterval: options.connectionsCheckingIntervalMs },
          listener,
        );
  server.headersTimeout = options.headersTimeoutMs ?? 10_000;
  server.requestTimeout = options.requestTimeoutMs ?? 60_000;
  server.keepAliveTimeout = options.keepAliveTimeoutMs ?? 5_000;
  return server;
}
