import { owner, TaskRunner, TaskService } from "@mcp-tasks/core";
import { MemoryTaskStore } from "@mcp-tasks/store-memory";

const store = new MemoryTaskStore({ maxTasks: 10_000, maxTasksPerOwner: 100 });
const service = new TaskService({ store, ttl: { defaultTtlMs: 60_000, anchor: "terminal" } });
const runner = new TaskRunner({ service });
const alice = owner({ principalId: "alice", tenantId: "acme" });

// Start a tool call as a task: the record comes back at once, the handler runs on.
const task = await runner.start(alice, {
  era: "2026-07-28",
  request: { toolName: "confirm_delete", arguments: { filename: "report.pdf" } },
  handler: async (args, ctx) => {
    const { confirm } = await ctx.requireInput({
      confirm: { method: "elicitation/create", params: { message: `Delete ${args.filename}?` } },
    });
    return { content: [{ type: "text", text: `answer: ${confirm.action}` }] };
  },
});
console.log("created", task.status);

// The client polls, sees the question, answers it by key.
const waiting = await service.waitFor(alice, task.taskId, (t) => t.status === "input_required");
console.log("asked", Object.keys(waiting.inputRequests));
await service.submitInput(alice, task.taskId, { confirm: { action: "accept" } });

// Another owner cannot see the task at all.
const bob = owner({ principalId: "bob", tenantId: "acme" });
await service.get(bob, task.taskId).catch((e) => console.log("bob:", e.code));

const done = await service.waitFor(alice, task.taskId, (t) => t.status === "completed");
console.log("result", JSON.stringify(done.outcome));
await store.close();
