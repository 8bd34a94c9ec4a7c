/**
 * The SDK's Client task tests (a `Client` with `McpServer` / `Server` over an in-memory
 * transport), with every `InMemoryTaskStore` swapped for an `SdkTaskStore`.
 *
 * Copied and adapted from modelcontextprotocol/typescript-sdk (MIT, Copyright (c) 2024
 * Anthropic, PBC), `test/client/index.test.ts` at tag 1.30.0
 * (2d889f2b329e46680ec9bdd565de4616c497825a): its `Task-based execution` block and
 * `should respect server task capabilities`. Adaptations:
 * - `new InMemoryTaskStore()` is `await env.taskStore()`, and its `cleanup()` the
 *   environment's teardown;
 * - `z4` is `z` (zod 4); `{ ttl: extra.taskRequestedTtl }` is cast to `CreateTaskOptions`
 *   (`exactOptionalPropertyTypes`); formatting and strict-mode typing.
 *
 * Left out: see `../sdk-suite.test.ts`.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { CreateTaskOptions } from "@modelcontextprotocol/sdk/experimental/tasks";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import {
  CallToolResultSchema,
  CreateTaskResultSchema,
  ElicitRequestSchema,
  ElicitResultSchema,
  ListToolsResultSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { beforeEach, describe, expect, test } from "vitest";
import { z } from "zod";
import type { SdkTaskStore } from "../../src/sdk-task-store.js";
import type { StoreFactory } from "../fixtures.js";
import { taskEnvironment } from "./helpers.js";

export function clientTaskTests(factory: StoreFactory): void {
  describe("test/client/index.test.ts", () => {
    const env = taskEnvironment(factory);

    describe("Task-based execution", () => {
      describe("Client calling server", () => {
        let serverTaskStore: SdkTaskStore;

        beforeEach(async () => {
          serverTaskStore = await env.taskStore();
        });

        test("should create task on server via tool call", async () => {
          const server = new McpServer(
            {
              name: "test-server",
              version: "1.0.0",
            },
            {
              capabilities: {
                tasks: {
                  requests: {
                    tools: {
                      call: {},
                    },
                  },
                },
              },
              taskStore: serverTaskStore,
            },
          );

          server.experimental.tasks.registerToolTask(
            "test-tool",
            {
              description: "A test tool",
              inputSchema: {},
            },
            {
              async createTask(_args, extra) {
                const task = await extra.taskStore.createTask({
                  ttl: extra.taskRequestedTtl,
                } as CreateTaskOptions);

                const result = {
                  content: [{ type: "text", text: "Tool executed successfully!" }],
                };
                await extra.taskStore.storeTaskResult(task.taskId, "completed", result);

                return { task };
              },
              async getTask(_args, extra) {
                const task = await extra.taskStore.getTask(extra.taskId);
                if (!task) {
                  throw new Error(`Task ${extra.taskId} not found`);
                }
                return task;
              },
              async getTaskResult(_args, extra) {
                const result = await extra.taskStore.getTaskResult(extra.taskId);
                return result as { content: Array<{ type: "text"; text: string }> };
              },
            },
          );

          const client = new Client({
            name: "test-client",
            version: "1.0.0",
          });

          const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();

          await Promise.all([client.connect(clientTransport), server.connect(serverTransport)]);

          // Client creates task on server via tool call
          await client.callTool({ name: "test-tool", arguments: {} }, CallToolResultSchema, {
            task: {
              ttl: 60000,
            },
          });

          // Verify task was created successfully by listing tasks
          const taskList = await client.experimental.tasks.listTasks();
          expect(taskList.tasks.length).toBeGreaterThan(0);
          const task = taskList.tasks[0]!;
          expect(task.status).toBe("completed");
        });

        test("should query task status from server using getTask", async () => {
          const server = new McpServer(
            {
              name: "test-server",
              version: "1.0.0",
            },
            {
              capabilities: {
                tasks: {
                  requests: {
                    tools: {
                      call: {},
                    },
                  },
                },
              },
              taskStore: serverTaskStore,
            },
          );

          server.experimental.tasks.registerToolTask(
            "test-tool",
            {
              description: "A test tool",
              inputSchema: {},
            },
            {
              async createTask(_args, extra) {
                const task = await extra.taskStore.createTask({
                  ttl: extra.taskRequestedTtl,
                } as CreateTaskOptions);

                const result = {
                  content: [{ type: "text", text: "Success!" }],
                };
                await extra.taskStore.storeTaskResult(task.taskId, "completed", result);

                return { task };
              },
              async getTask(_args, extra) {
                const task = await extra.taskStore.getTask(extra.taskId);
                if (!task) {
                  throw new Error(`Task ${extra.taskId} not found`);
                }
                return task;
              },
              async getTaskResult(_args, extra) {
                const result = await extra.taskStore.getTaskResult(extra.taskId);
                return result as { content: Array<{ type: "text"; text: string }> };
              },
            },
          );

          const client = new Client({
            name: "test-client",
            version: "1.0.0",
          });

          const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();

          await Promise.all([client.connect(clientTransport), server.connect(serverTransport)]);

          // Create a task
          await client.callTool({ name: "test-tool", arguments: {} }, CallToolResultSchema, {
            task: { ttl: 60000 },
          });

          // Query task status by listing tasks and getting the first one
          const taskList = await client.experimental.tasks.listTasks();
          expect(taskList.tasks.length).toBeGreaterThan(0);
          const task = taskList.tasks[0]!;
          expect(task).toBeDefined();
          expect(task.taskId).toBeDefined();
          expect(task.status).toBe("completed");
        });

        test("should query task result from server using getTaskResult", async () => {
          const server = new McpServer(
            {
              name: "test-server",
              version: "1.0.0",
            },
            {
              capabilities: {
                tasks: {
                  requests: {
                    tools: {
                      call: {},
                      list: {},
                    },
                  },
                },
              },
              taskStore: serverTaskStore,
            },
          );

          server.experimental.tasks.registerToolTask(
            "test-tool",
            {
              description: "A test tool",
              inputSchema: {},
            },
            {
              async createTask(_args, extra) {
                const task = await extra.taskStore.createTask({
                  ttl: extra.taskRequestedTtl,
                } as CreateTaskOptions);

                const result = {
                  content: [{ type: "text", text: "Result data!" }],
                };
                await extra.taskStore.storeTaskResult(task.taskId, "completed", result);

                return { task };
              },
              async getTask(_args, extra) {
                const task = await extra.taskStore.getTask(extra.taskId);
                if (!task) {
                  throw new Error(`Task ${extra.taskId} not found`);
                }
                return task;
              },
              async getTaskResult(_args, extra) {
                const result = await extra.taskStore.getTaskResult(extra.taskId);
                return result as { content: Array<{ type: "text"; text: string }> };
              },
            },
          );

          const client = new Client({
            name: "test-client",
            version: "1.0.0",
          });

          const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();

          await Promise.all([client.connect(clientTransport), server.connect(serverTransport)]);

          // Create a task using callToolStream to capture the task ID
          let taskId: string | undefined;
          const stream = client.experimental.tasks.callToolStream(
            { name: "test-tool", arguments: {} },
            CallToolResultSchema,
            {
              task: { ttl: 60000 },
            },
          );

          for await (const message of stream) {
            if (message.type === "taskCreated") {
              taskId = message.task.taskId;
            }
          }

          expect(taskId).toBeDefined();

          // Query task result using the captured task ID
          const result = await client.experimental.tasks.getTaskResult(
            taskId!,
            CallToolResultSchema,
          );
          expect(result.content).toEqual([{ type: "text", text: "Result data!" }]);
        });

        test("should query task list from server using listTasks", async () => {
          const server = new McpServer(
            {
              name: "test-server",
              version: "1.0.0",
            },
            {
              capabilities: {
                tasks: {
                  requests: {
                    tools: {
                      call: {},
                    },
                  },
                },
              },
              taskStore: serverTaskStore,
            },
          );

          server.experimental.tasks.registerToolTask(
            "test-tool",
            {
              description: "A test tool",
              inputSchema: {},
            },
            {
              async createTask(_args, extra) {
                const task = await extra.taskStore.createTask({
                  ttl: extra.taskRequestedTtl,
                } as CreateTaskOptions);

                const result = {
                  content: [{ type: "text", text: "Success!" }],
                };
                await extra.taskStore.storeTaskResult(task.taskId, "completed", result);

                return { task };
              },
              async getTask(_args, extra) {
                const task = await extra.taskStore.getTask(extra.taskId);
                if (!task) {
                  throw new Error(`Task ${extra.taskId} not found`);
                }
                return task;
              },
              async getTaskResult(_args, extra) {
                const result = await extra.taskStore.getTaskResult(extra.taskId);
                return result as { content: Array<{ type: "text"; text: string }> };
              },
            },
          );

          const client = new Client({
            name: "test-client",
            version: "1.0.0",
          });

          const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();

          await Promise.all([client.connect(clientTransport), server.connect(serverTransport)]);

          // Create multiple tasks
          const createdTaskIds: string[] = [];

          for (let i = 0; i < 2; i++) {
            await client.callTool({ name: "test-tool", arguments: {} }, CallToolResultSchema, {
              task: { ttl: 60000 },
            });

            // Get the task ID from the task list
            const taskList = await client.experimental.tasks.listTasks();
            const newTask = taskList.tasks.find((t) => !createdTaskIds.includes(t.taskId));
            if (newTask) {
              createdTaskIds.push(newTask.taskId);
            }
          }

          // Query task list
          const taskList = await client.experimental.tasks.listTasks();
          expect(taskList.tasks.length).toBeGreaterThanOrEqual(2);
          for (const taskId of createdTaskIds) {
            expect(taskList.tasks).toContainEqual(
              expect.objectContaining({
                taskId,
                status: "completed",
              }),
            );
          }
        });
      });

      describe("Server calling client", () => {
        let clientTaskStore: SdkTaskStore;

        beforeEach(async () => {
          clientTaskStore = await env.taskStore();
        });

        test("should create task on client via server elicitation", async () => {
          const client = new Client(
            {
              name: "test-client",
              version: "1.0.0",
            },
            {
              capabilities: {
                elicitation: {},
                tasks: {
                  requests: {
                    elicitation: {
                      create: {},
                    },
                  },
                },
              },
              taskStore: clientTaskStore,
            },
          );

          client.setRequestHandler(ElicitRequestSchema, async (request, extra) => {
            const result = {
              action: "accept",
              content: { username: "list-user" },
            };

            // Check if task creation is requested
            if (request.params.task && extra.taskStore) {
              const task = await extra.taskStore.createTask({
                ttl: extra.taskRequestedTtl,
              } as CreateTaskOptions);
              await extra.taskStore.storeTaskResult(task.taskId, "completed", result);
              // Return CreateTaskResult when task creation is requested
              return { task };
            }

            // Return ElicitResult for non-task requests
            return result;
          });

          const server = new Server(
            {
              name: "test-server",
              version: "1.0.0",
            },
            {
              capabilities: {
                tasks: {
                  requests: {
                    elicitation: {
                      create: {},
                    },
                  },
                },
              },
            },
          );

          const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();

          await Promise.all([client.connect(clientTransport), server.connect(serverTransport)]);

          // Server creates task on client via elicitation
          const createTaskResult = await server.request(
            {
              method: "elicitation/create",
              params: {
                mode: "form",
                message: "Please provide your username",
                requestedSchema: {
                  type: "object",
                  properties: {
                    username: { type: "string" },
                  },
                  required: ["username"],
                },
              },
            },
            CreateTaskResultSchema,
            { task: { ttl: 60000 } },
          );

          // Verify CreateTaskResult structure
          expect(createTaskResult.task).toBeDefined();
          expect(createTaskResult.task.taskId).toBeDefined();
          const taskId = createTaskResult.task.taskId;

          // Verify task was created
          const task = await server.experimental.tasks.getTask(taskId);
          expect(task.status).toBe("completed");
        });

        test("should query task status from client using getTask", async () => {
          const client = new Client(
            {
              name: "test-client",
              version: "1.0.0",
            },
            {
              capabilities: {
                elicitation: {},
                tasks: {
                  requests: {
                    elicitation: {
                      create: {},
                    },
                  },
                },
              },
              taskStore: clientTaskStore,
            },
          );

          client.setRequestHandler(ElicitRequestSchema, async (request, extra) => {
            const result = {
              action: "accept",
              content: { username: "list-user" },
            };

            // Check if task creation is requested
            if (request.params.task && extra.taskStore) {
              const task = await extra.taskStore.createTask({
                ttl: extra.taskRequestedTtl,
              } as CreateTaskOptions);
              await extra.taskStore.storeTaskResult(task.taskId, "completed", result);
              // Return CreateTaskResult when task creation is requested
              return { task };
            }

            // Return ElicitResult for non-task requests
            return result;
          });

          const server = new Server(
            {
              name: "test-server",
              version: "1.0.0",
            },
            {
              capabilities: {
                tasks: {
                  requests: {
                    elicitation: {
                      create: {},
                    },
                  },
                },
              },
            },
          );

          const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();

          await Promise.all([client.connect(clientTransport), server.connect(serverTransport)]);

          // Create a task on client and wait for CreateTaskResult
          const createTaskResult = await server.request(
            {
              method: "elicitation/create",
              params: {
                mode: "form",
                message: "Please provide info",
                requestedSchema: {
                  type: "object",
                  properties: { username: { type: "string" } },
                },
              },
            },
            CreateTaskResultSchema,
            { task: { ttl: 60000 } },
          );

          // Verify CreateTaskResult structure
          expect(createTaskResult.task).toBeDefined();
          expect(createTaskResult.task.taskId).toBeDefined();
          const taskId = createTaskResult.task.taskId;

          // Query task status
          const task = await server.experimental.tasks.getTask(taskId);
          expect(task).toBeDefined();
          expect(task.taskId).toBe(taskId);
          expect(task.status).toBe("completed");
        });

        test("should query task result from client using getTaskResult", async () => {
          const client = new Client(
            {
              name: "test-client",
              version: "1.0.0",
            },
            {
              capabilities: {
                elicitation: {},
                tasks: {
                  requests: {
                    elicitation: {
                      create: {},
                    },
                  },
                },
              },
              taskStore: clientTaskStore,
            },
          );

          client.setRequestHandler(ElicitRequestSchema, async (request, extra) => {
            const result = {
              action: "accept",
              content: { username: "result-user" },
            };

            // Check if task creation is requested
            if (request.params.task && extra.taskStore) {
              const task = await extra.taskStore.createTask({
                ttl: extra.taskRequestedTtl,
              } as CreateTaskOptions);
              await extra.taskStore.storeTaskResult(task.taskId, "completed", result);
              // Return CreateTaskResult when task creation is requested
              return { task };
            }

            // Return ElicitResult for non-task requests
            return result;
          });

          const server = new Server(
            {
              name: "test-server",
              version: "1.0.0",
            },
            {
              capabilities: {
                tasks: {
                  requests: {
                    elicitation: {
                      create: {},
                    },
                  },
                },
              },
            },
          );

          const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();

          await Promise.all([client.connect(clientTransport), server.connect(serverTransport)]);

          // Create a task on client and wait for CreateTaskResult
          const createTaskResult = await server.request(
            {
              method: "elicitation/create",
              params: {
                mode: "form",
                message: "Please provide info",
                requestedSchema: {
                  type: "object",
                  properties: { username: { type: "string" } },
                },
              },
            },
            CreateTaskResultSchema,
            { task: { ttl: 60000 } },
          );

          // Verify CreateTaskResult structure
          expect(createTaskResult.task).toBeDefined();
          expect(createTaskResult.task.taskId).toBeDefined();
          const taskId = createTaskResult.task.taskId;

          // Query task result using getTaskResult
          const taskResult = await server.experimental.tasks.getTaskResult(
            taskId,
            ElicitResultSchema,
          );
          expect(taskResult.action).toBe("accept");
          expect(taskResult.content).toEqual({ username: "result-user" });
        });

        test("should query task list from client using listTasks", async () => {
          const client = new Client(
            {
              name: "test-client",
              version: "1.0.0",
            },
            {
              capabilities: {
                elicitation: {},
                tasks: {
                  requests: {
                    elicitation: {
                      create: {},
                    },
                  },
                },
              },
              taskStore: clientTaskStore,
            },
          );

          client.setRequestHandler(ElicitRequestSchema, async (request, extra) => {
            const result = {
              action: "accept",
              content: { username: "list-user" },
            };

            // Check if task creation is requested
            if (request.params.task && extra.taskStore) {
              const task = await extra.taskStore.createTask({
                ttl: extra.taskRequestedTtl,
              } as CreateTaskOptions);
              await extra.taskStore.storeTaskResult(task.taskId, "completed", result);
              // Return CreateTaskResult when task creation is requested
              return { task };
            }

            // Return ElicitResult for non-task requests
            return result;
          });

          const server = new Server(
            {
              name: "test-server",
              version: "1.0.0",
            },
            {
              capabilities: {
                tasks: {
                  requests: {
                    elicitation: {
                      create: {},
                    },
                  },
                },
              },
            },
          );

          const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();

          await Promise.all([client.connect(clientTransport), server.connect(serverTransport)]);

          // Create multiple tasks on client
          const createdTaskIds: string[] = [];
          for (let i = 0; i < 2; i++) {
            const createTaskResult = await server.request(
              {
                method: "elicitation/create",
                params: {
                  mode: "form",
                  message: "Please provide info",
                  requestedSchema: {
                    type: "object",
                    properties: { username: { type: "string" } },
                  },
                },
              },
              CreateTaskResultSchema,
              { task: { ttl: 60000 } },
            );

            // Verify CreateTaskResult structure and capture taskId
            expect(createTaskResult.task).toBeDefined();
            expect(createTaskResult.task.taskId).toBeDefined();
            createdTaskIds.push(createTaskResult.task.taskId);
          }

          // Query task list
          const taskList = await server.experimental.tasks.listTasks();
          expect(taskList.tasks.length).toBeGreaterThanOrEqual(2);
          for (const taskId of createdTaskIds) {
            expect(taskList.tasks).toContainEqual(
              expect.objectContaining({
                taskId,
                status: "completed",
              }),
            );
          }
        });
      });

      test("should list tasks from server with pagination", async () => {
        const serverTaskStore = await env.taskStore();

        const server = new McpServer(
          {
            name: "test-server",
            version: "1.0.0",
          },
          {
            capabilities: {
              tasks: {
                requests: {
                  tools: {
                    call: {},
                  },
                },
              },
            },
            taskStore: serverTaskStore,
          },
        );

        server.experimental.tasks.registerToolTask(
          "test-tool",
          {
            description: "A test tool",
            inputSchema: {
              id: z.string(),
            },
          },
          {
            async createTask({ id }, extra) {
              const task = await extra.taskStore.createTask({
                ttl: extra.taskRequestedTtl,
              } as CreateTaskOptions);

              const result = {
                content: [{ type: "text", text: `Result for ${id || "unknown"}` }],
              };
              await extra.taskStore.storeTaskResult(task.taskId, "completed", result);

              return { task };
            },
            async getTask(_args, extra) {
              const task = await extra.taskStore.getTask(extra.taskId);
              if (!task) {
                throw new Error(`Task ${extra.taskId} not found`);
              }
              return task;
            },
            async getTaskResult(_args, extra) {
              const result = await extra.taskStore.getTaskResult(extra.taskId);
              return result as { content: Array<{ type: "text"; text: string }> };
            },
          },
        );

        const client = new Client(
          {
            name: "test-client",
            version: "1.0.0",
          },
          {
            capabilities: {
              tasks: {
                requests: {
                  tools: {
                    call: {},
                  },
                },
              },
            },
          },
        );

        const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();

        await Promise.all([client.connect(clientTransport), server.connect(serverTransport)]);

        // Create multiple tasks
        const createdTaskIds: string[] = [];

        for (let i = 0; i < 3; i++) {
          await client.callTool(
            { name: "test-tool", arguments: { id: `task-${i + 1}` } },
            CallToolResultSchema,
            {
              task: { ttl: 60000 },
            },
          );

          // Get the task ID from the task list
          const taskList = await client.experimental.tasks.listTasks();
          const newTask = taskList.tasks.find((t) => !createdTaskIds.includes(t.taskId));
          if (newTask) {
            createdTaskIds.push(newTask.taskId);
          }
        }

        // List all tasks without cursor
        const firstPage = await client.experimental.tasks.listTasks();
        expect(firstPage.tasks.length).toBeGreaterThan(0);
        expect(firstPage.tasks.map((t) => t.taskId)).toEqual(
          expect.arrayContaining(createdTaskIds),
        );

        // If there's a cursor, test pagination
        if (firstPage.nextCursor) {
          const secondPage = await client.experimental.tasks.listTasks(firstPage.nextCursor);
          expect(secondPage.tasks).toBeDefined();
        }
      });

      describe("Error scenarios", () => {
        let serverTaskStore: SdkTaskStore;
        let clientTaskStore: SdkTaskStore;

        beforeEach(async () => {
          serverTaskStore = await env.taskStore();
          clientTaskStore = await env.taskStore();
        });

        test("should throw error when querying non-existent task from server", async () => {
          const server = new Server(
            {
              name: "test-server",
              version: "1.0.0",
            },
            {
              capabilities: {
                tools: {},
                tasks: {
                  requests: {
                    tools: {
                      call: {},
                    },
                  },
                },
              },
              taskStore: serverTaskStore,
            },
          );

          const client = new Client(
            {
              name: "test-client",
              version: "1.0.0",
            },
            {
              capabilities: {
                tasks: {
                  requests: {
                    tools: {
                      call: {},
                    },
                  },
                },
              },
            },
          );

          const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();

          await Promise.all([client.connect(clientTransport), server.connect(serverTransport)]);

          // Try to get a task that doesn't exist
          await expect(client.experimental.tasks.getTask("non-existent-task")).rejects.toThrow();
        });

        test("should throw error when querying result of non-existent task from server", async () => {
          const server = new Server(
            {
              name: "test-server",
              version: "1.0.0",
            },
            {
              capabilities: {
                tools: {},
                tasks: {
                  requests: {
                    tools: {
                      call: {},
                    },
                  },
                },
              },
              taskStore: serverTaskStore,
            },
          );

          const client = new Client(
            {
              name: "test-client",
              version: "1.0.0",
            },
            {
              capabilities: {
                tasks: {
                  requests: {
                    tools: {
                      call: {},
                    },
                  },
                },
              },
            },
          );

          const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();

          await Promise.all([client.connect(clientTransport), server.connect(serverTransport)]);

          // Try to get result of a task that doesn't exist
          await expect(
            client.experimental.tasks.getTaskResult("non-existent-task", CallToolResultSchema),
          ).rejects.toThrow();
        });

        test("should throw error when server queries non-existent task from client", async () => {
          const client = new Client(
            {
              name: "test-client",
              version: "1.0.0",
            },
            {
              capabilities: {
                elicitation: {},
                tasks: {
                  requests: {
                    elicitation: {
                      create: {},
                    },
                  },
                },
              },
              taskStore: clientTaskStore,
            },
          );

          client.setRequestHandler(ElicitRequestSchema, async () => ({
            action: "accept",
            content: { username: "test" },
          }));

          const server = new Server(
            {
              name: "test-server",
              version: "1.0.0",
            },
            {
              capabilities: {
                tasks: {
                  requests: {
                    elicitation: {
                      create: {},
                    },
                  },
                },
              },
            },
          );

          const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();

          await Promise.all([client.connect(clientTransport), server.connect(serverTransport)]);

          // Try to query a task that doesn't exist on client
          await expect(server.experimental.tasks.getTask("non-existent-task")).rejects.toThrow();
        });
      });
    });

    test("should respect server task capabilities", async () => {
      const serverTaskStore = await env.taskStore();
      const server = new McpServer(
        {
          name: "test-server",
          version: "1.0.0",
        },
        {
          capabilities: {
            tasks: {
              requests: {
                tools: {
                  call: {},
                },
              },
            },
          },
          taskStore: serverTaskStore,
        },
      );

      server.experimental.tasks.registerToolTask(
        "test-tool",
        {
          description: "A test tool",
          inputSchema: {},
        },
        {
          async createTask(_args, extra) {
            const task = await extra.taskStore.createTask({
              ttl: extra.taskRequestedTtl,
            } as CreateTaskOptions);

            const result = {
              content: [{ type: "text", text: "Success!" }],
            };
            await extra.taskStore.storeTaskResult(task.taskId, "completed", result);

            return { task };
          },
          async getTask(_args, extra) {
            const task = await extra.taskStore.getTask(extra.taskId);
            if (!task) {
              throw new Error(`Task ${extra.taskId} not found`);
            }
            return task;
          },
          async getTaskResult(_args, extra) {
            const result = await extra.taskStore.getTaskResult(extra.taskId);
            return result as { content: Array<{ type: "text"; text: string }> };
          },
        },
      );

      const client = new Client(
        {
          name: "test-client",
          version: "1.0.0",
        },
        {
          enforceStrictCapabilities: true,
        },
      );

      const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();
      await Promise.all([client.connect(clientTransport), server.connect(serverTransport)]);

      // Server supports task creation for tools/call
      expect(client.getServerCapabilities()).toEqual({
        tools: {
          listChanged: true,
        },
        tasks: {
          requests: {
            tools: {
              call: {},
            },
          },
        },
      });

      // These should work because server supports tasks
      await expect(
        client.callTool({ name: "test-tool", arguments: {} }, CallToolResultSchema, {
          task: { ttl: 60000 },
        }),
      ).resolves.not.toThrow();
      await expect(client.experimental.tasks.listTasks()).resolves.not.toThrow();

      // tools/list doesn't support task creation, but it shouldn't throw - it should just ignore the task metadata
      await expect(
        client.request(
          {
            method: "tools/list",
            params: {},
          },
          ListToolsResultSchema,
        ),
      ).resolves.not.toThrow();
    });
  });
}
