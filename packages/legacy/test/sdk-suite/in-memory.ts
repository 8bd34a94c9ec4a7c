/**
 * The SDK's `InMemoryTaskStore` / `InMemoryTaskMessageQueue` unit tests, run against
 * `SdkTaskStore` / `SdkTaskMessageQueue`.
 *
 * Copied and adapted from modelcontextprotocol/typescript-sdk (MIT, Copyright (c) 2024
 * Anthropic, PBC), `test/experimental/tasks/stores/in-memory.test.ts` at tag 1.30.0
 * (2d889f2b329e46680ec9bdd565de4616c497825a). Adaptations: `new InMemoryTaskStore()` is
 * `await env.taskStore()`; `store.cleanup()` after each test is the environment's
 * teardown; task parameters are typed as the store's `CreateTaskOptions` (the SDK's
 * `TaskCreationParams` does not fit `exactOptionalPropertyTypes`); formatting and
 * strict-mode typing. Left out: see `../sdk-suite.test.ts`.
 */
import type {
  CreateTaskOptions,
  QueuedMessage,
} from "@modelcontextprotocol/sdk/experimental/tasks";
import type { Request } from "@modelcontextprotocol/sdk/types.js";
import { beforeEach, describe, expect, it } from "vitest";
import type { SdkTaskMessageQueue, SdkTaskStore } from "../../src/sdk-task-store.js";
import type { StoreFactory } from "../fixtures.js";
import { taskEnvironment } from "./helpers.js";

export function inMemoryTaskStoreTests(factory: StoreFactory): void {
  describe("InMemoryTaskStore", () => {
    const env = taskEnvironment(factory);
    let store: SdkTaskStore;

    beforeEach(async () => {
      store = await env.taskStore();
    });

    describe("createTask", () => {
      it("should create a new task with working status", async () => {
        const taskParams: CreateTaskOptions = {
          ttl: 60000,
        };
        const request: Request = {
          method: "tools/call",
          params: { name: "test-tool" },
        };

        const task = await store.createTask(taskParams, 123, request);

        expect(task).toBeDefined();
        expect(task.taskId).toBeDefined();
        expect(typeof task.taskId).toBe("string");
        expect(task.taskId.length).toBeGreaterThan(0);
        expect(task.status).toBe("working");
        expect(task.ttl).toBe(60000);
        expect(task.pollInterval).toBeDefined();
        expect(task.createdAt).toBeDefined();
        expect(new Date(task.createdAt).getTime()).toBeGreaterThan(0);
      });

      it("should create task without ttl", async () => {
        const taskParams: CreateTaskOptions = {};
        const request: Request = {
          method: "tools/call",
          params: {},
        };

        const task = await store.createTask(taskParams, 456, request);

        expect(task).toBeDefined();
        expect(task.ttl).toBeNull();
      });

      it("should generate unique taskIds", async () => {
        const taskParams: CreateTaskOptions = {};
        const request: Request = {
          method: "tools/call",
          params: {},
        };

        const task1 = await store.createTask(taskParams, 789, request);
        const task2 = await store.createTask(taskParams, 790, request);

        expect(task1.taskId).not.toBe(task2.taskId);
      });
    });

    describe("getTask", () => {
      it("should return null for non-existent task", async () => {
        const task = await store.getTask("non-existent");
        expect(task).toBeNull();
      });

      it("should return task state", async () => {
        const taskParams: CreateTaskOptions = {};
        const request: Request = {
          method: "tools/call",
          params: {},
        };

        const createdTask = await store.createTask(taskParams, 111, request);
        await store.updateTaskStatus(createdTask.taskId, "working");

        const task = await store.getTask(createdTask.taskId);
        expect(task).toBeDefined();
        expect(task?.status).toBe("working");
      });
    });

    describe("updateTaskStatus", () => {
      let taskId: string;

      beforeEach(async () => {
        const taskParams: CreateTaskOptions = {};
        const createdTask = await store.createTask(taskParams, 222, {
          method: "tools/call",
          params: {},
        });
        taskId = createdTask.taskId;
      });

      it("should keep task status as working", async () => {
        const task = await store.getTask(taskId);
        expect(task?.status).toBe("working");
      });

      it("should update task status to input_required", async () => {
        await store.updateTaskStatus(taskId, "input_required");

        const task = await store.getTask(taskId);
        expect(task?.status).toBe("input_required");
      });

      it("should update task status to completed", async () => {
        await store.updateTaskStatus(taskId, "completed");

        const task = await store.getTask(taskId);
        expect(task?.status).toBe("completed");
      });

      it("should update task status to failed with error", async () => {
        await store.updateTaskStatus(taskId, "failed", "Something went wrong");

        const task = await store.getTask(taskId);
        expect(task?.status).toBe("failed");
        expect(task?.statusMessage).toBe("Something went wrong");
      });

      it("should update task status to cancelled", async () => {
        await store.updateTaskStatus(taskId, "cancelled");

        const task = await store.getTask(taskId);
        expect(task?.status).toBe("cancelled");
      });

      it("should throw if task not found", async () => {
        await expect(store.updateTaskStatus("non-existent", "working")).rejects.toThrow(
          "Task with ID non-existent not found",
        );
      });

      describe("status lifecycle validation", () => {
        it("should allow transition from working to input_required", async () => {
          await store.updateTaskStatus(taskId, "input_required");
          const task = await store.getTask(taskId);
          expect(task?.status).toBe("input_required");
        });

        it("should allow transition from working to completed", async () => {
          await store.updateTaskStatus(taskId, "completed");
          const task = await store.getTask(taskId);
          expect(task?.status).toBe("completed");
        });

        it("should allow transition from working to failed", async () => {
          await store.updateTaskStatus(taskId, "failed");
          const task = await store.getTask(taskId);
          expect(task?.status).toBe("failed");
        });

        it("should allow transition from working to cancelled", async () => {
          await store.updateTaskStatus(taskId, "cancelled");
          const task = await store.getTask(taskId);
          expect(task?.status).toBe("cancelled");
        });

        it("should allow transition from input_required to working", async () => {
          await store.updateTaskStatus(taskId, "input_required");
          await store.updateTaskStatus(taskId, "working");
          const task = await store.getTask(taskId);
          expect(task?.status).toBe("working");
        });

        it("should allow transition from input_required to completed", async () => {
          await store.updateTaskStatus(taskId, "input_required");
          await store.updateTaskStatus(taskId, "completed");
          const task = await store.getTask(taskId);
          expect(task?.status).toBe("completed");
        });

        it("should allow transition from input_required to failed", async () => {
          await store.updateTaskStatus(taskId, "input_required");
          await store.updateTaskStatus(taskId, "failed");
          const task = await store.getTask(taskId);
          expect(task?.status).toBe("failed");
        });

        it("should allow transition from input_required to cancelled", async () => {
          await store.updateTaskStatus(taskId, "input_required");
          await store.updateTaskStatus(taskId, "cancelled");
          const task = await store.getTask(taskId);
          expect(task?.status).toBe("cancelled");
        });

        it("should reject transition from completed to any other status", async () => {
          await store.updateTaskStatus(taskId, "completed");
          await expect(store.updateTaskStatus(taskId, "working")).rejects.toThrow(
            "Cannot update task",
          );
          await expect(store.updateTaskStatus(taskId, "input_required")).rejects.toThrow(
            "Cannot update task",
          );
          await expect(store.updateTaskStatus(taskId, "failed")).rejects.toThrow(
            "Cannot update task",
          );
          await expect(store.updateTaskStatus(taskId, "cancelled")).rejects.toThrow(
            "Cannot update task",
          );
        });

        it("should reject transition from failed to any other status", async () => {
          await store.updateTaskStatus(taskId, "failed");
          await expect(store.updateTaskStatus(taskId, "working")).rejects.toThrow(
            "Cannot update task",
          );
          await expect(store.updateTaskStatus(taskId, "input_required")).rejects.toThrow(
            "Cannot update task",
          );
          await expect(store.updateTaskStatus(taskId, "completed")).rejects.toThrow(
            "Cannot update task",
          );
          await expect(store.updateTaskStatus(taskId, "cancelled")).rejects.toThrow(
            "Cannot update task",
          );
        });

        it("should reject transition from cancelled to any other status", async () => {
          await store.updateTaskStatus(taskId, "cancelled");
          await expect(store.updateTaskStatus(taskId, "working")).rejects.toThrow(
            "Cannot update task",
          );
          await expect(store.updateTaskStatus(taskId, "input_required")).rejects.toThrow(
            "Cannot update task",
          );
          await expect(store.updateTaskStatus(taskId, "completed")).rejects.toThrow(
            "Cannot update task",
          );
          await expect(store.updateTaskStatus(taskId, "failed")).rejects.toThrow(
            "Cannot update task",
          );
        });
      });
    });

    describe("storeTaskResult", () => {
      let taskId: string;

      beforeEach(async () => {
        const taskParams: CreateTaskOptions = {
          ttl: 60000,
        };
        const createdTask = await store.createTask(taskParams, 333, {
          method: "tools/call",
          params: {},
        });
        taskId = createdTask.taskId;
      });

      it("should store task result and set status to completed", async () => {
        const result = {
          content: [{ type: "text" as const, text: "Success!" }],
        };

        await store.storeTaskResult(taskId, "completed", result);

        const task = await store.getTask(taskId);
        expect(task?.status).toBe("completed");

        const storedResult = await store.getTaskResult(taskId);
        expect(storedResult).toEqual(result);
      });

      it("should throw if task not found", async () => {
        await expect(store.storeTaskResult("non-existent", "completed", {})).rejects.toThrow(
          "Task with ID non-existent not found",
        );
      });

      it("should reject storing result for task already in completed status", async () => {
        // First complete the task
        const firstResult = {
          content: [{ type: "text" as const, text: "First result" }],
        };
        await store.storeTaskResult(taskId, "completed", firstResult);

        // Try to store result again (should fail)
        const secondResult = {
          content: [{ type: "text" as const, text: "Second result" }],
        };

        await expect(store.storeTaskResult(taskId, "completed", secondResult)).rejects.toThrow(
          "Cannot store result for task",
        );
      });

      it("should store result with failed status", async () => {
        const result = {
          content: [{ type: "text" as const, text: "Error details" }],
          isError: true,
        };

        await store.storeTaskResult(taskId, "failed", result);

        const task = await store.getTask(taskId);
        expect(task?.status).toBe("failed");

        const storedResult = await store.getTaskResult(taskId);
        expect(storedResult).toEqual(result);
      });

      it("should reject storing result for task already in failed status", async () => {
        // First fail the task
        const firstResult = {
          content: [{ type: "text" as const, text: "First error" }],
          isError: true,
        };
        await store.storeTaskResult(taskId, "failed", firstResult);

        // Try to store result again (should fail)
        const secondResult = {
          content: [{ type: "text" as const, text: "Second error" }],
          isError: true,
        };

        await expect(store.storeTaskResult(taskId, "failed", secondResult)).rejects.toThrow(
          "Cannot store result for task",
        );
      });

      it("should allow storing result from input_required status", async () => {
        await store.updateTaskStatus(taskId, "input_required");

        const result = {
          content: [{ type: "text" as const, text: "Success!" }],
        };

        await store.storeTaskResult(taskId, "completed", result);

        const task = await store.getTask(taskId);
        expect(task?.status).toBe("completed");
      });
    });

    describe("getTaskResult", () => {
      it("should throw if task not found", async () => {
        await expect(store.getTaskResult("non-existent")).rejects.toThrow(
          "Task with ID non-existent not found",
        );
      });

      it("should throw if task has no result stored", async () => {
        const taskParams: CreateTaskOptions = {};
        const createdTask = await store.createTask(taskParams, 444, {
          method: "tools/call",
          params: {},
        });

        await expect(store.getTaskResult(createdTask.taskId)).rejects.toThrow(
          `Task ${createdTask.taskId} has no result stored`,
        );
      });

      it("should return stored result", async () => {
        const taskParams: CreateTaskOptions = {};
        const createdTask = await store.createTask(taskParams, 555, {
          method: "tools/call",
          params: {},
        });

        const result = {
          content: [{ type: "text" as const, text: "Result data" }],
        };
        await store.storeTaskResult(createdTask.taskId, "completed", result);

        const retrieved = await store.getTaskResult(createdTask.taskId);
        expect(retrieved).toEqual(result);
      });
    });

    describe("listTasks", () => {
      it("should return empty list when no tasks", async () => {
        const result = await store.listTasks();
        expect(result.tasks).toEqual([]);
        expect(result.nextCursor).toBeUndefined();
      });

      it("should return all tasks when less than page size", async () => {
        await store.createTask({}, 1, {
          method: "tools/call",
          params: {},
        });
        await store.createTask({}, 2, {
          method: "tools/call",
          params: {},
        });
        await store.createTask({}, 3, {
          method: "tools/call",
          params: {},
        });

        const result = await store.listTasks();
        expect(result.tasks).toHaveLength(3);
        expect(result.nextCursor).toBeUndefined();
      });

      it("should paginate when more than page size", async () => {
        // Create 15 tasks (page size is 10)
        for (let i = 1; i <= 15; i++) {
          await store.createTask({}, i, {
            method: "tools/call",
            params: {},
          });
        }

        // Get first page
        const page1 = await store.listTasks();
        expect(page1.tasks).toHaveLength(10);
        expect(page1.nextCursor).toBeDefined();

        // Get second page using cursor
        const page2 = await store.listTasks(page1.nextCursor);
        expect(page2.tasks).toHaveLength(5);
        expect(page2.nextCursor).toBeUndefined();
      });

      it("should throw error for invalid cursor", async () => {
        await store.createTask({}, 1, {
          method: "tools/call",
          params: {},
        });

        await expect(store.listTasks("non-existent-cursor")).rejects.toThrow(
          "Invalid cursor: non-existent-cursor",
        );
      });
    });
  });

  describe("InMemoryTaskMessageQueue", () => {
    const env = taskEnvironment(factory);
    let queue: SdkTaskMessageQueue;

    beforeEach(() => {
      queue = env.messageQueue();
    });

    describe("enqueue and dequeue", () => {
      it("should enqueue and dequeue request messages", async () => {
        const requestMessage: QueuedMessage = {
          type: "request",
          message: {
            jsonrpc: "2.0",
            id: 1,
            method: "tools/call",
            params: { name: "test-tool", arguments: {} },
          },
          timestamp: Date.now(),
        };

        await queue.enqueue("task-1", requestMessage);
        const dequeued = await queue.dequeue("task-1");

        expect(dequeued).toEqual(requestMessage);
      });

      it("should enqueue and dequeue notification messages", async () => {
        const notificationMessage: QueuedMessage = {
          type: "notification",
          message: {
            jsonrpc: "2.0",
            method: "notifications/progress",
            params: { progress: 50, total: 100 },
          },
          timestamp: Date.now(),
        };

        await queue.enqueue("task-2", notificationMessage);
        const dequeued = await queue.dequeue("task-2");

        expect(dequeued).toEqual(notificationMessage);
      });

      it("should enqueue and dequeue response messages", async () => {
        const responseMessage: QueuedMessage = {
          type: "response",
          message: {
            jsonrpc: "2.0",
            id: 42,
            result: { content: [{ type: "text", text: "Success" }] },
          },
          timestamp: Date.now(),
        };

        await queue.enqueue("task-3", responseMessage);
        const dequeued = await queue.dequeue("task-3");

        expect(dequeued).toEqual(responseMessage);
      });

      it("should return undefined when dequeuing from empty queue", async () => {
        const dequeued = await queue.dequeue("task-empty");
        expect(dequeued).toBeUndefined();
      });

      it("should maintain FIFO order for mixed message types", async () => {
        const request: QueuedMessage = {
          type: "request",
          message: {
            jsonrpc: "2.0",
            id: 1,
            method: "tools/call",
            params: {},
          },
          timestamp: 1000,
        };

        const notification: QueuedMessage = {
          type: "notification",
          message: {
            jsonrpc: "2.0",
            method: "notifications/progress",
            params: {},
          },
          timestamp: 2000,
        };

        const response: QueuedMessage = {
          type: "response",
          message: {
            jsonrpc: "2.0",
            id: 1,
            result: {},
          },
          timestamp: 3000,
        };

        await queue.enqueue("task-fifo", request);
        await queue.enqueue("task-fifo", notification);
        await queue.enqueue("task-fifo", response);

        expect(await queue.dequeue("task-fifo")).toEqual(request);
        expect(await queue.dequeue("task-fifo")).toEqual(notification);
        expect(await queue.dequeue("task-fifo")).toEqual(response);
        expect(await queue.dequeue("task-fifo")).toBeUndefined();
      });
    });

    describe("dequeueAll", () => {
      it("should dequeue all messages including responses", async () => {
        const request: QueuedMessage = {
          type: "request",
          message: {
            jsonrpc: "2.0",
            id: 1,
            method: "tools/call",
            params: {},
          },
          timestamp: 1000,
        };

        const response: QueuedMessage = {
          type: "response",
          message: {
            jsonrpc: "2.0",
            id: 1,
            result: {},
          },
          timestamp: 2000,
        };

        const notification: QueuedMessage = {
          type: "notification",
          message: {
            jsonrpc: "2.0",
            method: "notifications/progress",
            params: {},
          },
          timestamp: 3000,
        };

        await queue.enqueue("task-all", request);
        await queue.enqueue("task-all", response);
        await queue.enqueue("task-all", notification);

        const all = await queue.dequeueAll("task-all");

        expect(all).toHaveLength(3);
        expect(all[0]).toEqual(request);
        expect(all[1]).toEqual(response);
        expect(all[2]).toEqual(notification);
      });

      it("should return empty array for non-existent task", async () => {
        const all = await queue.dequeueAll("non-existent");
        expect(all).toEqual([]);
      });

      it("should clear the queue after dequeueAll", async () => {
        const message: QueuedMessage = {
          type: "request",
          message: {
            jsonrpc: "2.0",
            id: 1,
            method: "test",
            params: {},
          },
          timestamp: Date.now(),
        };

        await queue.enqueue("task-clear", message);
        await queue.dequeueAll("task-clear");

        const dequeued = await queue.dequeue("task-clear");
        expect(dequeued).toBeUndefined();
      });
    });

    describe("queue size limits", () => {
      it("should throw when maxSize is exceeded", async () => {
        const message: QueuedMessage = {
          type: "request",
          message: {
            jsonrpc: "2.0",
            id: 1,
            method: "test",
            params: {},
          },
          timestamp: Date.now(),
        };

        await queue.enqueue("task-limit", message, undefined, 2);
        await queue.enqueue("task-limit", message, undefined, 2);

        await expect(queue.enqueue("task-limit", message, undefined, 2)).rejects.toThrow(
          "Task message queue overflow",
        );
      });

      it("should allow enqueue when under maxSize", async () => {
        const message: QueuedMessage = {
          type: "response",
          message: {
            jsonrpc: "2.0",
            id: 1,
            result: {},
          },
          timestamp: Date.now(),
        };

        await expect(queue.enqueue("task-ok", message, undefined, 5)).resolves.toBeUndefined();
      });
    });

    describe("task isolation", () => {
      it("should isolate messages between different tasks", async () => {
        const message1: QueuedMessage = {
          type: "request",
          message: {
            jsonrpc: "2.0",
            id: 1,
            method: "test1",
            params: {},
          },
          timestamp: 1000,
        };

        const message2: QueuedMessage = {
          type: "response",
          message: {
            jsonrpc: "2.0",
            id: 2,
            result: {},
          },
          timestamp: 2000,
        };

        await queue.enqueue("task-a", message1);
        await queue.enqueue("task-b", message2);

        expect(await queue.dequeue("task-a")).toEqual(message1);
        expect(await queue.dequeue("task-b")).toEqual(message2);
        expect(await queue.dequeue("task-a")).toBeUndefined();
        expect(await queue.dequeue("task-b")).toBeUndefined();
      });
    });

    describe("response message error handling", () => {
      it("should handle response messages with errors", async () => {
        const errorResponse: QueuedMessage = {
          type: "error",
          message: {
            jsonrpc: "2.0",
            id: 1,
            error: {
              code: -32600,
              message: "Invalid Request",
            },
          },
          timestamp: Date.now(),
        };

        await queue.enqueue("task-error", errorResponse);
        const dequeued = await queue.dequeue("task-error");

        expect(dequeued).toEqual(errorResponse);
        expect(dequeued?.type).toBe("error");
      });
    });
  });
}
