#!/usr/bin/env node
import { randomBytes } from "node:crypto";
import { hostname } from "node:os";
import { createDemoApp } from "./app.js";
import { resolverFromConfig } from "./auth/from-config.js";
import { ConfigError, HELP, parseConfig } from "./config.js";
import { createDemoConsole } from "./console.js";
import { listen } from "./http-server.js";
import { startTracing } from "./otel.js";
import { openStore, StoreUnavailableError } from "./store.js";
import { demoTools } from "./tools/index.js";

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
      limits: config.limits,
    });
  } catch (error) {
    if (!(error instanceof StoreUnavailableError)) throw error;
    console.error(`error: ${error.message}`);
    return 1;
  }

  // Before the app: the libraries' spans go to whatever provider is global when they start.
  const tracing = startTracing(config.otel);

  // Unique per process: the name under which this node leases the tasks it runs.
  const holder = `${hostname()}:${process.pid}:${randomBytes(4).toString("hex")}`;
  const app = createDemoApp({
    store: opened.store,
    storeLabel: config.store,
    resolver: auth.resolver,
    requireAuth: config.requireAuth,
    limits: config.ownerLimits,
    legacy: config.legacy ? true : "off",
    loopbackOnly:
      config.host === "127.0.0.1" || config.host === "localhost" || config.host === "::1",
    role: config.role,
    ...(config.concurrency !== undefined && { concurrency: config.concurrency }),
    ...(config.ownerRunningCap !== undefined && { maxRunningPerOwner: config.ownerRunningCap }),
    ...(config.ownerWaitingCap !== undefined && { maxWaitingPerOwner: config.ownerWaitingCap }),
    ...(opened.leasing && {
      lease: { holder, durationMs: config.leaseMs },
      sweepIntervalMs: config.sweepMs,
    }),
  });
  let running: Awaited<ReturnType<typeof listen>>;
  try {
    running = await listen(app, {
      host: config.host,
      port: config.port,
      ...(config.metricsToken !== undefined && { metricsToken: config.metricsToken }),
      // The web console at /console, on every node that serves MCP.
      ...(app.role !== "worker" && {
        console: createDemoConsole({
          service: app.service,
          operatorView: app.operatorView,
          metrics: app.metrics,
          resolver: auth.resolver,
          adminTokens: config.adminTokens,
          toolNames: demoTools().map((tool) => tool.name),
          onLiveRefused: (limit) => app.metrics.countLimitRefusal(`console_live_views_${limit}`),
        }),
      }),
    });
  } catch (error) {
    console.error(
      `error: cannot listen on ${config.host}:${config.port}: ${(error as Error).message}`,
    );
    await app.close({ drainMs: 0 }).catch(() => {});
    await tracing.shutdown().catch(() => {});
    return 1;
  }
  // One write, so a reader of the pipe sees the whole start-up block at once.
  console.log(
    [
      app.role === "worker"
        ? `worker on ${running.url.replace(/\/mcp$/, "")} (store: ${opened.label}; role: worker, concurrency ${app.runner.concurrency})`
        : `listening on ${running.url} (store: ${opened.label}; eras: ${app.eras.join(", ")}${app.role === "http" ? "; role: http" : ""})`,
      `metrics: ${running.url.replace(/\/mcp$/, "/metrics")}`,
      ...(app.role === "worker"
        ? []
        : [
            `console: ${running.url.replace(/\/mcp$/, "/console")}${config.adminTokens.length > 0 ? " (operator tokens: --admin-tokens)" : ""}`,
          ]),
      ...(opened.leasing ? [`lease holder: ${holder}`] : []),
      ...(tracing.startupLine === null ? [] : [tracing.startupLine]),
      ...auth.startupLines,
      config.requireAuth
        ? "anonymous callers: refused (401); --allow-anonymous lets them in"
        : "anonymous callers: allowed (--allow-anonymous): they share one owner and the unowned tasks",
    ].join("\n"),
  );
  for (const warning of auth.warnings) console.warn(warning);

  return new Promise<number>((resolve) => {
    const shutdown = (signal: string) => {
      console.log(`${signal}: shutting down`);
      running
        .stop()
        // The last spans (the runs the shutdown ended) are exported before the exit.
        .then(() => tracing.shutdown().catch(() => {}))
        .then(
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
