// Run from packages/store-drizzle after a build: node examples/quickstart.mjs
// Uses DATABASE_URL when set, else an embedded PGlite database in ./.mcp-tasks/pglite.
import { owner, startJanitor, TaskRunner, TaskService } from "@mcp-tasks/core";
import { createPGliteTaskStore, createPostgresTaskStore, migrate } from "@mcp-tasks/store-drizzle";

const url = process.env.DATABASE_URL; // e.g. postgres://postgres@127.0.0.1:5432/app
let store;
if (url) {
  await migrate(url); // at start-up, on every node: concurrent runs are safe
  store = await createPostgresTaskStore({ url });
} else {
  store = await createPGliteTaskStore({ dataDir: "./.mcp-tasks/pglite", migrate: true });
}

// A registered tool: every node that has it can run its tasks, and re-run them elsewhere.
const add = {
  name: "add",
  inputSchema: { type: "object" },
  taskMode: "always",
  execution: { retry: { attempts: 3 } }, // up to two more runs if a worker is lost
  run: async ({ a, b }) => ({ content: [{ type: "text", text: String(a + b) }] }),
};

const service = new TaskService({ store });
const runner = new TaskRunner({ service, tools: [add] }); // a worker: claims queued tasks
const stopJanitor = startJanitor(service, { intervalMs: 60_000 }); // expiry + orphans

const alice = owner({ principalId: "alice", tenantId: "acme" });
const task = await runner.start(alice, {
  era: "2026-07-28",
  request: { toolName: "add", arguments: { a: 2, b: 3 } },
});
const done = await service.waitFor(alice, task.taskId, (t) => t.status === "completed");
console.log(done.status, JSON.stringify(done.outcome));

await runner.shutdown(); // stop claiming; unfinished tasks go back to the queue
await stopJanitor();
await store.close();
