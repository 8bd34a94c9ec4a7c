#!/usr/bin/env node
import { randomBytes } from "node:crypto";
import { hostname } from "node:os";
import { createLegacyHandler } from "@mcp-tasks/legacy";
import { createDemoApp } from "./app.js";
import { resolverFromConfig } from "./auth/from-config.js";
import { ConfigError, HELP, parseConfig } from "./config.js";
import { listen } from "./http-server.js";
import { openStore, StoreUnavailableError } from "./store.js";

async function main(): Promise<number> {
  let config: ReturnType<typeof parseConfig>;
  try {
    config = parseConfig(process.argv.slice(2), process.env);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    console.error(`error: ${error.message}\n\n${HELP}`);
    return 2;
  }
  if (config.help) {
    process.stdout.write(HELP);
    return 0;
  }

  let auth: ReturnType<typeof resolverFromConfig>;
  try {
    auth = resolverFromConfig(config);
  } catch (error) {
    console.error(`error: ${(error as Error).message}`);
    return 2;
  }

  let opened: Awaited<ReturnType<typeof openStore>>;
  try {
    opened = await openStore({
      kind: config.store,
      dataDir: config.dataDir,
      databaseUrl: config.databaseUrl,
      ...(config.schema !== undefined && { schema: config.schema }),
    });
  } catch (error) {
    if (!(error instanceof StoreUnavailableError)) throw error;
    console.error(`error: ${error.message}`);
    return 1;
  }

  // Unique per process: the name under which this node leases the tasks it runs.
  const holder = `${hostname()}:${process.pid}:${randomBytes(4).toString("hex")}`;
  const app = createDemoApp({
    store: opened.store,
    resolver: auth.resolver,
    requireAuth: config.requireAuth,
    legacy: config.legacy ? createLegacyHandler : "off",
    loopbackOnly:
      config.host === "127.0.0.1" || config.host === "localhost" || config.host === "::1",
    role: config.role,
    ...(config.concurrency !== undefined && { concurrency: config.concurrency }),
    ...(opened.leasing && {
      lease: { holder, durationMs: config.leaseMs },
      sweepIntervalMs: config.sweepMs,
    }),
  });
  let running: Awaited<ReturnType<typeof listen>>;
  try {
    running = await listen(app, { host: config.host, port: config.port });
  } catch (error) {
    console.error(
      `error: cannot listen on ${config.host}:${config.port}: ${(error as Error).message}`,
    );
    await app.close({ drainMs: 0 }).catch(() => {});
    return 1;
  }
  // One write, so a reader of the pipe sees the whole start-up block at once.
  console.log(
    [
      app.role === "worker"
        ? `worker on ${running.url.replace(/\/mcp$/, "")} (store: ${opened.label}; role: worker, concurrency ${app.runner.concurrency})`
        : `listening on ${running.url} (store: ${opened.label}; eras: ${app.eras.join(", ")}${app.role === "http" ? "; role: http" : ""})`,
      `metrics: ${running.url.replace(/\/mcp$/, "/metrics")}`,
      ...(opened.leasing ? [`lease holder: ${holder}`] : []),
      ...auth.startupLines,
    ].join("\n"),
  );

  return new Promise<number>((resolve) => {
    const shutdown = (signal: string) => {
      console.log(`${signal}: shutting down`);
      running.stop().then(
        () => resolve(0),
        (error) => {
          console.error("shutdown failed:", error instanceof Error ? error.message : error);
          resolve(1);
        },
      );
    };
    process.once("SIGTERM", () => shutdown("SIGTERM"));
    process.once("SIGINT", () => shutdown("SIGINT"));
  });
}

main().then(
  (code) => process.exit(code),
  (error) => {
    console.error("fatal:", error instanceof Error ? error.message : error);
    process.exit(1);
  },
);
