// scratch: a memory demo for profiling a task-creating tools/call (not committed)
import { MemoryTaskStore } from "@mcp-tasks/store-memory";
import { anonymousResolver, createDemoApp, demoTools, listen } from "../dist/index.js";
import { luaScript } from "./wrk.mjs";
import { modernBody, modernHeaders } from "./wire.mjs";
import { spawnSync } from "node:child_process";
const MANY = 10_000_000;
const store = new MemoryTaskStore({ sweepIntervalMs: 0, maxTasks: MANY, maxTasksPerOwner: MANY });
const app = createDemoApp({ store, resolver: anonymousResolver, requireAuth: false, tools: demoTools(), legacy: true, onError: () => {} });
const running = await listen(app, { host: "127.0.0.1", port: 0 });
const script = luaScript("/tmp/prof", "call", {
  headers: modernHeaders("tools/call", "slow_compute"),
  body: modernBody("tools/call", { name: "slow_compute", arguments: { seconds: 0 } }),
});
console.log(running.url, script);
process.on("SIGINT", async () => { process.exit(0); });
