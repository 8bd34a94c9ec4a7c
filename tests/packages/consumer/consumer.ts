// A consumer of every public entry point, type-checked in a project outside the repository
// against the installed tarballs, under `module: NodeNext` and under `moduleResolution:
// Bundler` (see test/packed.test.ts). It is never run.
import {
  ANONYMOUS,
  owner,
  type TaskRecord,
  TaskRunner,
  TaskService,
  type TaskStore,
  type ToolDefinition,
} from "@mcp-tasks/core";
import { completeTask, type OwnerScope, taskErrors } from "@mcp-tasks/core/store";
import { describeQueueStoreContract, describeTaskStoreContract } from "@mcp-tasks/core/testing";
import { createTasksServer, handleTaskListenRequest, TasksExtension } from "@mcp-tasks/extension";
import { createRawDispatch, type RawDispatch } from "@mcp-tasks/extension/client";
import { createLegacyHandler } from "@mcp-tasks/legacy";
import { SdkTaskStore, sdkTaskOptions, withTaskAuth } from "@mcp-tasks/legacy/sdk-task-store";
import { createPGliteTaskStore, createPostgresTaskStore, migrate } from "@mcp-tasks/store-drizzle";
import { MemoryTaskStore } from "@mcp-tasks/store-memory";

const memory: TaskStore = new MemoryTaskStore({ maxTasks: 10 });
const service = new TaskService({ store: memory });
const tool: ToolDefinition = {
  name: "noop",
  inputSchema: { type: "object" },
  taskMode: "optional",
  run: async () => ({ content: [{ type: "text", text: "ok" }] }),
};
const runner = new TaskRunner({ service, tools: [tool] });
const extension = new TasksExtension({ service, runner, tools: [tool] });

export const uses = {
  alice: owner({ principalId: "alice" }),
  createServer: () => createTasksServer(extension, { owner: ANONYMOUS }),
  listen: (request: Request) => handleTaskListenRequest(request, extension, ANONYMOUS),
  legacy: () =>
    createLegacyHandler({
      service,
      runner,
      tools: [tool],
      serverInfo: { name: "consumer", version: "1.0.0" },
      ownerOf: (request) => owner({ principalId: request.headers.get("x-user") }),
    }),
  sdk: () => ({ ...sdkTaskOptions({ service }), store: new SdkTaskStore({ service }) }),
  withTaskAuth,
  dispatch: (): RawDispatch => createRawDispatch({ url: "http://127.0.0.1/mcp", token: () => "t" }),
  drizzle: async (): Promise<TaskStore[]> => {
    await migrate("postgres://127.0.0.1/none");
    return [
      await createPGliteTaskStore({ migrate: true }),
      await createPostgresTaskStore({ url: "postgres://127.0.0.1/none" }),
    ];
  },
  store: (record: TaskRecord, scope: OwnerScope) => [completeTask, taskErrors, record, scope],
  contracts: [describeTaskStoreContract, describeQueueStoreContract],
};

// The entry points are the only way in: files behind them are not importable.
// @ts-expect-error not an entry point of @mcp-tasks/core
import("@mcp-tasks/core/dist/index.js");
