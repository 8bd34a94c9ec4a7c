import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { toNodeHandler } from "@modelcontextprotocol/node";
import type { DemoApp } from "./app.js";

/** The running HTTP server. */
export interface RunningServer {
  readonly url: string;
  readonly server: Server;
  /** Stops accepting, lets in-flight requests finish, then closes the app. */
  stop(): Promise<void>;
}

/** Serves `app` at `http://host:port/mcp` (port 0 picks a free port). */
export async function listen(
  app: DemoApp,
  options: { host: string; port: number; maxBodyBytes?: number },
): Promise<RunningServer> {
  const handle = toNodeHandler(app, {
    maxRequestBodySize: options.maxBodyBytes ?? 1024 * 1024,
    onerror: () => {},
  });
  const server = createServer((req, res) => {
    const path = (req.url ?? "/").split("?")[0];
    if (path !== "/mcp") {
      res.writeHead(404, { "Content-Type": "application/json" });
      res.end(JSON.stringify({ error: "Not found: the MCP endpoint is /mcp" }));
      return;
    }
    handle(req as Parameters<typeof handle>[0], res).catch(() => {
      if (!res.headersSent) res.writeHead(500, { "Content-Type": "application/json" });
      res.end(
        JSON.stringify({
          jsonrpc: "2.0",
          id: null,
          error: { code: -32603, message: "Internal error" },
        }),
      );
    });
  });
  server.requestTimeout = 0;
  server.headersTimeout = 30_000;
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
        server.closeIdleConnections();
        // Long-lived listen streams would hold the close forever: end them after a grace period.
        const force = setTimeout(() => server.closeAllConnections(), 5_000);
        force.unref();
        await closed;
        clearTimeout(force);
        await app.close({ drainMs: 5_000 });
      })();
      return stopping;
    },
  };
}
