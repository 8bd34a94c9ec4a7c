// The demo as the binary composes it (both eras, static tokens, memory store, `listen()`),
// run as its own OS process by the fault suite so that a crash cannot take the test runner
// down and the memory measured is the server's alone. Started with `--expose-gc`; answers
// `{ type: "memory" }` IPC messages with its memory after a full collection.
//
// Settings arrive as JSON in FAULT_SERVER_OPTIONS:
//   tokens            { "<token>": "principal@tenant", ... }
//   sweepIntervalMs   how often the memory store drops expired tasks (default 60000)
//   maxTasks, maxTasksPerOwner   the memory store's count quotas (defaults: the store's)
//   pollIntervalMs    suggested polling interval (default 500)
//   concurrency       most handlers running at once
// Imports the built demo (`dist/`, built by vitest's global setup) and the built packages.
import { owner } from "@mcp-tasks/core";
import { MemoryTaskStore } from "@mcp-tasks/store-memory";
import { createDemoApp } from "../../dist/app.js";
import { StaticTokenResolver } from "../../dist/auth/static-tokens.js";
import { listen } from "../../dist/http-server.js";

const options = JSON.parse(process.env.FAULT_SERVER_OPTIONS || "{}");
const tokens = new Map(
  Object.entries(options.tokens ?? {}).map(([token, who]) => {
    const [principalId, tenantId] = String(who).split("@");
    return [token, owner({ principalId, tenantId })];
  }),
);
const store = new MemoryTaskStore({
  sweepIntervalMs: options.sweepIntervalMs ?? 60_000,
  ...(options.maxTasks !== undefined && { maxTasks: options.maxTasks }),
  ...(options.maxTasksPerOwner !== undefined && { maxTasksPerOwner: options.maxTasksPerOwner }),
});
const errors = [];
// Errors that mean a code path broke (not a client's bad input), whatever the client got.
const bugs = [];
const app = createDemoApp({
  store,
  resolver: new StaticTokenResolver(tokens),
  // The fuzzer drives anonymous callers too: let them in on purpose (--allow-anonymous).
  requireAuth: false,
  legacy: true,
  pollIntervalMs: options.pollIntervalMs ?? 500,
  ...(options.concurrency !== undefined && { concurrency: options.concurrency }),
  onError: (error) => {
    // Kept (bounded) for the test to read; never on the wire.
    if (errors.length < 100) errors.push(String(error?.stack ?? error));
    if (/^(TypeError|RangeError|ReferenceError)\b/.test(String(error)) && bugs.length < 100) {
      bugs.push(String(error?.stack ?? error));
    }
  },
});
const running = await listen(app, { host: "127.0.0.1", port: 0 });

process.on("message", (message) => {
  if (message?.type !== "memory") return;
  // Twice: the first pass may only finalize what the second frees.
  globalThis.gc?.();
  globalThis.gc?.();
  const usage = process.memoryUsage();
  process.send?.({
    id: message.id,
    rss: usage.rss,
    heapUsed: usage.heapUsed,
    external: usage.external,
    arrayBuffers: usage.arrayBuffers,
    tasks: store.size,
    gc: typeof globalThis.gc === "function",
    errors,
    bugs,
  });
});
process.once("SIGTERM", () => {
  running.stop().then(
    () => process.exit(0),
    () => process.exit(1),
  );
});
console.log(`listening on ${running.url}`);
