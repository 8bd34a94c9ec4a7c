// A worker node in its own OS process for bench/queue.bench.mjs (the failover case). Uses
// the built packages (dist/). It starts one task of the retryable "long" tool, claimed at
// once by this node (its runner claims and has room), whose handler never returns; prints
// `{"started": <taskId>, "attempt": n, "holder": …}` once the handler runs, then keeps
// renewing its lease until the bench kills it with SIGKILL.
// Env: DATABASE_URL, SCHEMA, LEASE_MS (default 1000), OWNER (principal id).
import { owner, TaskRunner, TaskService } from "@mcp-tasks/core";
import { createPostgresTaskStore } from "../dist/index.js";

const env = process.env;
const out = (message) => process.stdout.write(`${JSON.stringify(message)}\n`);

const store = await createPostgresTaskStore({
  url: env.DATABASE_URL,
  schema: env.SCHEMA,
  poolSize: 4,
  applicationName: "mcp-tasks-bench-child",
});
const service = new TaskService({ store });
const long = {
  name: "long",
  inputSchema: { type: "object" },
  taskMode: "always",
  execution: { retry: { attempts: 3, backoffMs: 0 } },
  run: (_args, ctx) => {
    out({ started: ctx.taskId, attempt: ctx.attempt, holder: ctx.worker });
    // Runs until the process dies (or the run is stopped).
    return new Promise((_resolve, reject) => {
      ctx.signal.addEventListener("abort", () => reject(ctx.signal.reason), { once: true });
    });
  },
};
const runner = new TaskRunner({
  service,
  tools: [long],
  lease: { holder: `bench-child-${process.pid}`, durationMs: Number(env.LEASE_MS ?? 1000) },
});
await runner.start(owner({ principalId: env.OWNER ?? "bench" }), {
  era: "2026-07-28",
  request: { toolName: "long", arguments: {} },
});
