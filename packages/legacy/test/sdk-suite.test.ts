/**
 * The `@modelcontextprotocol/sdk` 1.x task tests, run with only the store and queue swapped
 * for `SdkTaskStore` / `SdkTaskMessageQueue`, over the memory store and PostgreSQL.
 *
 * Copied and adapted from modelcontextprotocol/typescript-sdk (MIT License, Copyright (c)
 * 2024 Anthropic, PBC) at tag 1.30.0 (2d889f2b329e46680ec9bdd565de4616c497825a), one
 * module per source file under `./sdk-suite/` (each lists its adaptations):
 * - `test/experimental/tasks/stores/in-memory.test.ts` → `in-memory.ts`
 * - `test/experimental/tasks/task-listing.test.ts` → `task-listing.ts`
 * - `test/integration-tests/taskLifecycle.test.ts` → `task-lifecycle.ts`
 * - `test/server/index.test.ts`, `Task-based execution` and `should respect client task
 *   capabilities` → `server-tasks.ts`
 * - `test/client/index.test.ts`, `Task-based execution` and `should respect server task
 *   capabilities` → `client-tasks.ts`
 * - `src/examples/server/simpleTaskInteractive.ts` (with 1.32.2's session handling) →
 *   `interactive-example.ts`, driven below as `src/examples/client/
 *   simpleTaskInteractiveClient.ts` drives it.
 * The error texts they expect are those of the installed 1.32.2 `InMemoryTaskStore`.
 *
 * Left out, as they cannot apply:
 * - in-memory: storeTaskResult "should reject storing result for cancelled task": a result
 *   arriving after a cancel is discarded on purpose (the task stays cancelled), so the
 *   work racing a client's `tasks/cancel` does not end in an unhandled rejection.
 * - in-memory: ttl cleanup "should cleanup task after ttl duration": it advances the SDK
 *   store's per-task `setTimeout` with fake timers; expiry here is the service's TTL
 *   policy, swept by the store on its own (or the database's) clock.
 * - in-memory: ttl cleanup "should reset cleanup timer when result is stored": same.
 * - in-memory: ttl cleanup "should not cleanup tasks without ttl": same.
 * - in-memory: ttl cleanup "should start cleanup timer when task reaches terminal state":
 *   same.
 * - in-memory: ttl cleanup "should return actual TTL in task response": same (the granted
 *   ttl itself is checked by createTask "should create a new task with working status").
 * - in-memory: ttl cleanup "should support omitted TTL for unlimited lifetime": same (the
 *   `null` ttl itself is checked by createTask "should create task without ttl").
 * - in-memory: ttl cleanup "should cleanup tasks regardless of status": same.
 * - in-memory: getAllTasks "should return all tasks": `getAllTasks()` is a debugging method
 *   of the SDK's store, not part of `TaskStore`.
 * - in-memory: getAllTasks "should return empty array when no tasks": same.
 * - in-memory: cleanup "should clear all timers and tasks": `cleanup()` drops the SDK
 *   store's timers and map; not part of `TaskStore` (a durable store is closed by its owner).
 * - in-memory: listTasks "should continue from cursor correctly": it reads task ids with
 *   `getAllTasks()` and passes one as a cursor, the SDK store's cursor format; ours are
 *   opaque positions.
 * - task-listing: "should treat cursor as opaque token": same (a task id from
 *   `getAllTasks()` as the cursor).
 */
import { randomUUID } from "node:crypto";
import { createServer } from "node:http";
import { owner, TaskService } from "@mcp-tasks/core";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import {
  CallToolRequestSchema,
  CallToolResultSchema,
  CreateMessageRequestSchema,
  CreateTaskResultSchema,
  ElicitRequestSchema,
  ErrorCode,
  GetTaskRequestSchema,
  McpError,
  TaskSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { SdkTaskStore, withTaskAuth } from "../src/sdk-task-store.js";
import type { StoreFactory, StoreFixture } from "./fixtures.js";
import { clientTaskTests } from "./sdk-suite/client-tasks.js";
import {
  listenOnRandomPort,
  memoryStore,
  postgresStore,
  taskEnvironment,
} from "./sdk-suite/helpers.js";
import { inMemoryTaskStoreTests } from "./sdk-suite/in-memory.js";
import { type RunningExample, startInteractiveExample } from "./sdk-suite/interactive-example.js";
import { serverTaskTests } from "./sdk-suite/server-tasks.js";
import { taskLifecycleTests } from "./sdk-suite/task-lifecycle.js";
import { taskListingTests } from "./sdk-suite/task-listing.js";

describe.each([memoryStore, postgresStore])("SDK 1.x task tests on the $name store", (factory) => {
  inMemoryTaskStoreTests(factory);
  taskListingTests(factory);
  taskLifecycleTests(factory);
  serverTaskTests(factory);
  clientTaskTests(factory);
  interactiveExampleTests(factory);
  beyondTheSdkTests(factory);
});

const HAIKU = `Cherry blossoms fall
Softly on the quiet pond
Spring whispers goodbye`;

/** The SDK's example client, minus the terminal: it confirms and answers with a haiku. */
async function exampleClient(url: URL) {
  const client = new Client(
    { name: "simple-task-interactive-client", version: "1.0.0" },
    { capabilities: { elicitation: { form: {} }, sampling: {} } },
  );
  const asked: string[] = [];
  client.setRequestHandler(ElicitRequestSchema, async (request) => {
    asked.push(request.params.message);
    return { action: "accept", content: { confirm: true } };
  });
  client.setRequestHandler(CreateMessageRequestSchema, async () => ({
    model: "mock-haiku-model",
    role: "assistant",
    content: { type: "text", text: HAIKU },
  }));
  const transport = new StreamableHTTPClientTransport(url);
  await client.connect(transport);
  return { client, transport, asked };
}

function interactiveExampleTests(factory: StoreFactory): void {
  describe("the SDK's interactive task example (simpleTaskInteractive), unmodified handlers", () => {
    let fixture: StoreFixture;
    let service: TaskService;
    let example: RunningExample;
    const clients: Client[] = [];

    beforeEach(async () => {
      fixture = await factory.create();
      service = new TaskService({ store: fixture.store, pollIntervalMs: 50 });
      example = await startInteractiveExample(service);
    });
    afterEach(async () => {
      await Promise.all(clients.splice(0).map((c) => c.close()));
      await example.close();
      await fixture.close();
    });

    it("runs its client's two demos over HTTP on 127.0.0.1, tasks kept in our store", async () => {
      const { client, transport, asked } = await exampleClient(example.url);
      clients.push(client);
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name)).toEqual(["confirm_delete", "write_haiku"]);

      // Demo 1: Elicitation (confirm_delete)
      const confirm = [];
      for await (const message of client.experimental.tasks.callToolStream(
        { name: "confirm_delete", arguments: { filename: "important.txt" } },
        CallToolResultSchema,
        { task: { ttl: 60000 } },
      )) {
        confirm.push(message);
      }
      expect(asked).toEqual(["Are you sure you want to delete 'important.txt'?"]);
      const created = confirm[0];
      if (created?.type !== "taskCreated") throw new Error("no task");
      const confirmed = confirm.at(-1);
      if (confirmed?.type !== "result") throw new Error(`no result: ${JSON.stringify(confirmed)}`);
      expect(confirmed.result.content).toEqual([{ type: "text", text: "Deleted 'important.txt'" }]);

      // Demo 2: Sampling (write_haiku)
      const haiku = [];
      for await (const message of client.experimental.tasks.callToolStream(
        { name: "write_haiku", arguments: { topic: "autumn leaves" } },
        CallToolResultSchema,
        { task: { ttl: 60000 } },
      )) {
        haiku.push(message);
      }
      const written = haiku.at(-1);
      if (written?.type !== "result") throw new Error(`no result: ${JSON.stringify(written)}`);
      expect(written.result.content).toEqual([{ type: "text", text: `Haiku:\n${HAIKU}` }]);

      // Both tasks are ours, owned by the session that created them.
      const sessionOwner = owner({ audience: `mcp-session:${transport.sessionId}` });
      const record = await service.get(sessionOwner, created.task.taskId);
      expect(record.status).toBe("completed");
      expect((await service.list(sessionOwner)).tasks).toHaveLength(2);
    });

    it("answers tasks/get only for the session that created the task", async () => {
      const a = await exampleClient(example.url);
      const b = await exampleClient(example.url);
      clients.push(a.client, b.client);
      // Nobody fetches the result, so the task waits in input_required.
      const created = await a.client.request(
        {
          method: "tools/call",
          params: { name: "confirm_delete", arguments: {}, task: { ttl: 60000 } },
        },
        CreateTaskResultSchema,
      );
      const { taskId } = created.task;
      const seen = await a.client.request({ method: "tasks/get", params: { taskId } }, TaskSchema);
      expect(seen.taskId).toBe(taskId);
      await expect(
        b.client.request({ method: "tasks/get", params: { taskId } }, TaskSchema),
      ).rejects.toThrow(`Task ${taskId} not found`);
    });
  });
}

/** A bare SDK server whose handlers call the store without a session id, as the examples do. */
async function ownerlessServer(store: SdkTaskStore, bind: boolean) {
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: () => randomUUID() });
  const server = new Server(
    { name: "ownerless", version: "1.0.0" },
    { capabilities: { tools: {}, tasks: { requests: { tools: { call: {} } } } } },
  );
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => ({
    task: await store.createTask({}, extra.requestId, request, extra.sessionId),
  }));
  server.setRequestHandler(GetTaskRequestSchema, async (request) => {
    const task = await store.getTask(request.params.taskId);
    if (task === null) throw new McpError(ErrorCode.InvalidParams, "not found");
    return task;
  });
  await server.connect(transport);
  if (bind) SdkTaskStore.bindTransport(transport);
  const http = createServer((req, res) => {
    const who = req.headers["x-owner"];
    // What an auth middleware leaves on the request; the bound transport hands it on.
    const authed =
      typeof who === "string" ? { auth: { token: who, clientId: who, scopes: [] } } : {};
    void transport.handleRequest(Object.assign(req, authed), res);
  });
  const url = new URL("/mcp", await listenOnRandomPort(http));
  return {
    url,
    async close() {
      await server.close();
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}

function beyondTheSdkTests(factory: StoreFactory): void {
  describe("SdkTaskStore beyond the SDK's tests", () => {
    const env = taskEnvironment(factory);
    const request = { method: "tools/call", params: { name: "t" } };

    it("answers in the SDK store's words, with the codes its handlers use", async () => {
      const store = await env.taskStore();
      await expect(store.getTaskResult("nope")).rejects.toMatchObject({
        message: "Task with ID nope not found",
        code: -32602,
      });
      const task = await store.createTask({}, 1, request);
      await expect(store.getTaskResult(task.taskId)).rejects.toMatchObject({
        message: `Task ${task.taskId} has no result stored`,
        code: -32603,
      });
      // A failed result is what an SDK client sees as failed, and what the error says.
      await store.storeTaskResult(task.taskId, "failed", { content: [] });
      await expect(store.storeTaskResult(task.taskId, "completed", {})).rejects.toMatchObject({
        message: `Cannot store result for task ${task.taskId} in terminal status 'failed'. Task results can only be stored once.`,
        code: -32602,
      });
      await expect(store.updateTaskStatus(task.taskId, "working")).rejects.toMatchObject({
        message: `Cannot update task ${task.taskId} from terminal status 'failed' to 'working'. Terminal states (completed, failed, cancelled) cannot transition to other states.`,
        code: -32602,
      });
      await expect(store.listTasks("bogus")).rejects.toMatchObject({
        message: "Invalid cursor: bogus",
        code: -32602,
      });
      // Another session's task is not found, in the same words.
      const theirs = await store.createTask({}, 2, request, "other");
      await expect(
        store.updateTaskStatus(theirs.taskId, "working", undefined, "mine"),
      ).rejects.toThrow(`Task with ID ${theirs.taskId} not found`);
    });

    it("rethrows a failed task's JSON-RPC error from getTaskResult, data included", async () => {
      const store = await env.taskStore();
      const task = await store.createTask({}, 1, request);
      await store.service.fail(owner({}), task.taskId, {
        code: -32050,
        message: "quota exceeded",
        data: { retry: false },
      });
      await expect(store.getTaskResult(task.taskId)).rejects.toMatchObject({
        message: "quota exceeded",
        code: -32050,
        data: { retry: false },
      });
    });

    it("keeps the status message when an update brings none, like the SDK's store", async () => {
      const store = await env.taskStore();
      const task = await store.createTask({}, 1, request);
      await store.updateTaskStatus(task.taskId, "input_required", "Waiting for you");
      await store.updateTaskStatus(task.taskId, "input_required");
      expect((await store.getTask(task.taskId))?.statusMessage).toBe("Waiting for you");
      await store.updateTaskStatus(task.taskId, "working");
      expect((await store.getTask(task.taskId))?.statusMessage).toBe("Waiting for you");
    });

    it("takes concurrent input_required updates (one per queued request) in its stride", async () => {
      const store = await env.taskStore();
      const task = await store.createTask({}, 1, request);
      await Promise.all([1, 2, 3].map(() => store.updateTaskStatus(task.taskId, "input_required")));
      expect((await store.getTask(task.taskId))?.status).toBe("input_required");
      await store.updateTaskStatus(task.taskId, "working");
      expect((await store.getTask(task.taskId))?.status).toBe("working");
    });

    it("refuses to bind a transport that is not connected yet", () => {
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: () => "x" });
      expect(() => SdkTaskStore.bindTransport(transport)).toThrow(/after server\.connect/);
    });

    describe.each([false, true])(
      "session-less calls from handlers, transport bound: %s",
      (bind) => {
        it(bind ? "act for the session served" : "act for nobody in particular", async () => {
          const store = await env.taskStore();
          const running = await ownerlessServer(store, bind);
          const client = new Client({ name: "c", version: "1.0.0" });
          await client.connect(new StreamableHTTPClientTransport(running.url));
          try {
            const created = await client.request(
              { method: "tools/call", params: { name: "t", arguments: {}, task: {} } },
              CreateTaskResultSchema,
            );
            const get = client.request(
              { method: "tasks/get", params: { taskId: created.task.taskId } },
              TaskSchema,
            );
            if (bind) expect((await get).taskId).toBe(created.task.taskId);
            else await expect(get).rejects.toThrow("not found");
          } finally {
            await client.close();
            await running.close();
          }
        });
      },
    );

    it("takes the owner from the auth info the bound transport hands on (req.auth)", async () => {
      const store = await env.taskStore();
      const running = await ownerlessServer(store, true);
      const client = new Client({ name: "c", version: "1.0.0" });
      await client.connect(
        new StreamableHTTPClientTransport(running.url, {
          requestInit: { headers: { "x-owner": "alice" } },
        }),
      );
      try {
        const created = await client.request(
          { method: "tools/call", params: { name: "t", arguments: {}, task: {} } },
          CreateTaskResultSchema,
        );
        const { taskId } = created.task;
        expect(
          (await client.request({ method: "tasks/get", params: { taskId } }, TaskSchema)).taskId,
        ).toBe(taskId);
        // Alice owns it, wherever she asks from; the anonymous owner does not see it.
        const alice = { token: "alice", clientId: "alice", scopes: [] };
        expect(await withTaskAuth(alice, () => store.getTask(taskId, "elsewhere"))).not.toBeNull();
        expect(await store.getTask(taskId)).toBeNull();
      } finally {
        await client.close();
        await running.close();
      }
    });
  });
}
