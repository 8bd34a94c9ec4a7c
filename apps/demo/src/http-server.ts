import { createHash, timingSafeEqual } from "node:crypto";
import type { IncomingMessage, Server, ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { ConsoleHandler } from "@mcp-tasks/console";
import { createTasksHttpServer, writeRefusal } from "@mcp-tasks/http";
import type { DemoApp } from "./app.js";

const digest = (text: string) => createHash("sha256").update(text, "utf8").digest();

/**
 * Whether the request bears `Authorization: Bearer <token>` for `token`, compared in
 * constant time over equal-length digests.
 */
function bearsToken(req: IncomingMessage, token: Buffer | undefined): boolean {
  if (token === undefined) return false;
  const match = /^Bearer[ ]+([\x21-\x7e]{1,4096})\s*$/i.exec(req.headers.authorization ?? "");
  return match !== null && timingSafeEqual(digest(match[1] ?? ""), token);
}

function answerUnauthorized(res: ServerResponse): void {
  res.writeHead(401, {
    "Content-Type": "text/plain; charset=utf-8",
    "WWW-Authenticate": 'Bearer realm="mcp-tasks-demo metrics"',
  });
  res.end("unauthorized: /metrics needs the metrics token (--metrics-token)\n");
}

/** The running HTTP server. */
export interface RunningServer {
  readonly url: string;
  readonly server: Server;
  /** Stops accepting, lets in-flight requests finish, then closes the app. */
  stop(): Promise<void>;
}

/**
 * Serves `app` at `http://host:port/mcp` (port 0 picks a free port). The body limit is the
 * app's (`DemoAppOptions.maxBodyBytes`); `maxBodyBytes` here is accepted for compatibility.
 */
export async function listen(
  app: DemoApp,
  options: {
    host: string;
    port: number;
    maxBodyBytes?: number;
    console?: ConsoleHandler;
    /**
     * A bearer token for `/metrics` (then required there) and for the holder in `/health`
     * (shown only to its bearer); without it `/metrics` is open and `/health` never names
     * the holder.
     */
    metricsToken?: string;
  },
): Promise<RunningServer> {
  const metricsToken =
    options.metricsToken === undefined ? undefined : digest(options.metricsToken);
  const server = createTasksHttpServer(
    (req, res) => {
      const path = (req.url ?? "/").split("?")[0];
      const operational = path === "/metrics" || path === "/health";
      if (operational) {
        // The same DNS-rebinding protection as /mcp.
        const refused = app.checkHostAndOrigin(req);
        if (refused !== undefined) {
          req.resume();
          writeRefusal(res, refused);
          return;
        }
      }
      if (path === "/metrics" && (req.method === "GET" || req.method === "HEAD")) {
        if (metricsToken !== undefined && !bearsToken(req, metricsToken)) {
          answerUnauthorized(res);
          return;
        }
        app.metricsText().then(
          (text) => {
            res.writeHead(200, { "Content-Type": "text/plain; version=0.0.4; charset=utf-8" });
            res.end(req.method === "HEAD" ? undefined : text);
          },
          () => {
            res.writeHead(500, { "Content-Type": "text/plain; charset=utf-8" });
            res.end("metrics unavailable\n");
          },
        );
        return;
      }
      if (path === "/health" && (req.method === "GET" || req.method === "HEAD")) {
        res.writeHead(200, { "Content-Type": "application/json" });
        res.end(
          req.method === "HEAD"
            ? undefined
            : JSON.stringify({
                status: "ok",
                role: app.role,
                // The lease holder names the host and process: for the token's bearer only.
                ...(bearsToken(req, metricsToken) && { holder: app.runner.holder }),
                claiming: app.runner.claiming,
                running: app.runner.active,
              }),
        );
        return;
      }
      // The web console (see console.ts), when configured: it answers every path below it.
      if (options.console && (path === "/console" || path?.startsWith("/console/"))) {
        void options.console(req, res);
        return;
      }
      if (path !== "/mcp") {
        res.writeHead(404, { "Content-Type": "application/json" });
        res.end(JSON.stringify({ error: "Not found: the MCP endpoint is /mcp" }));
        return;
      }
      app.handle(req, res).catch(() => {
        if (!res.headersSent) res.writeHead(500, { "Content-Type": "application/json" });
        res.end(
          JSON.stringify({
            jsonrpc: "2.0",
            id: null,
            error: { code: -32603, message: "Internal error" },
          }),
        );
      });
    },
    // Bounded header and request timeouts (a body trickled in cannot hold a socket); SSE
    // responses are not bounded by them.
    { headersTimeoutMs: 30_000 },
  );
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, options.host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  const hostPart = options.host.includes(":") ? `[${options.host}]` : options.host;
  let stopping: Promise<void> | undefined;
  return {
    url: `http://${hostPart}:${port}/mcp`,
    server,
    stop() {
      stopping ??= (async () => {
        const closed = new Promise<void>((resolve) => server.close(() => resolve()));
        await options.console?.close(); // ends its live streams
        server.closeIdleConnections();
        const within = (ms: number) =>
          Promise.race([
            closed.then(() => true),
            new Promise<false>((resolve) => setTimeout(() => resolve(false), ms).unref()),
          ]);
        // In-flight requests get a moment to finish; then 2025-11-25 sessions are closed
        // (ending their GET streams); then long-lived streams are cut.
        if (!(await within(1_000))) {
          await app.closeSessions();
          if (!(await within(4_000))) server.closeAllConnections();
        }
        await closed;
        await app.close({ drainMs: 5_000 });
      })();
      return stopping;
    },
  };
}
