import { TASK_ERROR_CODES, TaskError } from "@mcp-tasks/core";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { taskFailureToRpc } from "../src/errors.js";
import {
  AckResultSchema,
  CreateTaskResultSchema,
  declaresTasksExtension,
  GetTaskResultSchema,
  tasksServerCapabilities,
} from "../src/index.js";
import {
  ALICE,
  BOB,
  ctx,
  EXT,
  errorOf,
  type Harness,
  harness,
  resultOf,
  STORES,
  settled,
  startTask,
} from "./fixtures.js";

describe.each(STORES)("on the $name store", (factory) => {
  let h: Harness;
  beforeEach(async () => {
    h = await harness(factory);
  });
  afterEach(async () => {
    await h.close();
  });

  describe("negotiation", () => {
    it("advertises the extension as exactly {} and never capabilities.tasks", () => {
      expect(tasksServerCapabilities()).toEqual({ extensions: { [EXT]: {} } });
      expect(tasksServerCapabilities()).not.toHaveProperty("tasks");
    });

    it("reads the declaration from this request's capabilities only", () => {
      expect(declaresTasksExtension({ extensions: { [EXT]: {} } })).toBe(true);
      expect(declaresTasksExtension({ extensions: { [EXT]: { x: 1 } } })).toBe(true);
      expect(declaresTasksExtension({ extensions: {} })).toBe(false);
      expect(declaresTasksExtension({ tasks: {} })).toBe(false);
      expect(declaresTasksExtension({ extensions: { [EXT]: true } })).toBe(false);
      expect(declaresTasksExtension(undefined)).toBe(false);
    });
  });

  describe("tools/call", () => {
    it("answers a never-task tool synchronously even with the extension", async () => {
      const result = resultOf(
        await h.ext.callTool(ctx(), { name: "echo", arguments: { text: "a" } }),
      );
      expect(result).toEqual({ content: [{ type: "text", text: "echo: a" }] });
    });

    it("creates a flat CreateTaskResult for an optional tool when the request declares the extension", async () => {
      const result = resultOf(
        await h.ext.callTool(ctx(), { name: "work", arguments: { gate: "g" } }),
      );
      const parsed = CreateTaskResultSchema.parse(result);
      expect(parsed.status).toBe("working");
      for (const key of [
        "ttl",
        "pollInterval",
        "task",
        "requestState",
        "result",
        "error",
        "inputRequests",
      ]) {
        expect(result).not.toHaveProperty(key);
      }
      expect(parsed.ttlMs === null || parsed.ttlMs > 0).toBe(true);
      expect(parsed.pollIntervalMs).toBe(100);
      // Durable before it is returned: tasks/get finds it at once.
      expect(resultOf(await h.ext.getTask(ctx(), { taskId: parsed.taskId })).taskId).toBe(
        parsed.taskId,
      );
      h.gates.open("g");
    });

    it("runs an optional tool synchronously when this request did not declare the extension", async () => {
      const result = resultOf(
        await h.ext.callTool(ctx(ALICE, { capabilities: {} }), { name: "work", arguments: {} }),
      );
      expect(result).not.toHaveProperty("taskId");
      expect(result).toMatchObject({ content: [{ type: "text", text: "worked" }] });
    });

    it("answers -32021 with requiredCapabilities for a task-only tool without the extension", async () => {
      const error = errorOf(
        await h.ext.callTool(ctx(ALICE, { capabilities: {} }), {
          name: "tool_error",
          arguments: {},
        }),
      );
      expect(error.code).toBe(-32021);
      expect(error.data).toEqual({ requiredCapabilities: { extensions: { [EXT]: {} } } });
    });

    it("ignores a legacy params.task", async () => {
      const sync = resultOf(
        await h.ext.callTool(ctx(), {
          name: "echo",
          arguments: { text: "b" },
          task: { ttl: 1000 },
        }),
      );
      expect(sync).not.toHaveProperty("taskId");
      const plain = resultOf(
        await h.ext.callTool(ctx(ALICE, { capabilities: {} }), {
          name: "work",
          arguments: {},
          task: {},
        }),
      );
      expect(plain).not.toHaveProperty("taskId");
    });

    it("answers -32602 for unknown tools, missing and mistyped arguments", async () => {
      expect(errorOf(await h.ext.callTool(ctx(), { name: "nope" })).code).toBe(-32602);
      expect(errorOf(await h.ext.callTool(ctx(), { name: "echo", arguments: {} })).code).toBe(
        -32602,
      );
      expect(
        errorOf(await h.ext.callTool(ctx(), { name: "echo", arguments: { text: 3 } })).code,
      ).toBe(-32602);
      expect(errorOf(await h.ext.callTool(ctx(), { name: 5 })).code).toBe(-32602);
      expect(errorOf(await h.ext.callTool(ctx(), { name: "echo", arguments: [] })).code).toBe(
        -32602,
      );
    });

    it("turns a synchronous tool's thrown JSON-RPC error into that error", async () => {
      const error = errorOf(
        await h.ext.callTool(ctx(ALICE, { capabilities: {} }), { name: "crash" }),
      );
      expect(error).toEqual({ code: -32050, message: "kaboom", data: { why: "test" } });
    });

    it("composes an ephemeral input_required round with a task (preflight)", async () => {
      const round1 = resultOf(await h.ext.callTool(ctx(), { name: "named", arguments: {} }));
      expect(round1).toMatchObject({
        resultType: "input_required",
        inputRequests: { who: { method: "elicitation/create" } },
      });
      expect(round1).not.toHaveProperty("taskId");
      const round2 = resultOf(
        await h.ext.callTool(
          ctx(ALICE, { inputResponses: { who: { action: "accept", content: { name: "Ada" } } } }),
          {
            name: "named",
            arguments: {},
          },
        ),
      ) as { taskId: string };
      expect(CreateTaskResultSchema.parse(round2)).not.toHaveProperty("requestState");
      await settled(h, round2.taskId);
      const done = resultOf(await h.ext.getTask(ctx(), { taskId: round2.taskId }));
      expect(done).toMatchObject({
        status: "completed",
        result: { content: [{ text: "hi Ada" }] },
      });
    });

    it("serves requireInput of a synchronous run through multi-round-trip requests", async () => {
      const noExt = { capabilities: {} };
      const round1 = resultOf(await h.ext.callTool(ctx(ALICE, noExt), { name: "ask" }));
      expect(round1).toMatchObject({ resultType: "input_required" });
      expect(Object.keys((round1 as { inputRequests: object }).inputRequests)).toEqual([
        "first",
        "second",
      ]);
      const answers = {
        first: { action: "accept", content: { a: 1 } },
        second: { action: "decline" },
      };
      const round2 = resultOf(
        await h.ext.callTool(ctx(ALICE, { ...noExt, inputResponses: answers }), { name: "ask" }),
      );
      expect(round2).toMatchObject({ content: [{ type: "text", text: JSON.stringify(answers) }] });
    });
  });

  describe("tasks/get", () => {
    it("projects every status as a valid DetailedTask with resultType complete", async () => {
      const working = await startTask(h, "work", { gate: "w" });
      const w = resultOf(await h.ext.getTask(ctx(), { taskId: working }));
      expect(GetTaskResultSchema.parse(w)).toMatchObject({
        status: "working",
        resultType: "complete",
      });
      expect(w).not.toHaveProperty("result");
      expect(w).not.toHaveProperty("requestState");

      h.gates.open("w");
      await settled(h, working);
      const c = resultOf(await h.ext.getTask(ctx(), { taskId: working }));
      expect(GetTaskResultSchema.parse(c)).toMatchObject({
        status: "completed",
        result: { resultType: "complete", content: [{ text: "worked" }], _meta: { keep: 1 } },
      });
      expect(JSON.stringify(c)).not.toContain("related-task");

      const toolError = await startTask(h, "tool_error");
      await settled(h, toolError);
      expect(resultOf(await h.ext.getTask(ctx(), { taskId: toolError }))).toMatchObject({
        status: "completed",
        result: { isError: true },
      });

      const crash = await startTask(h, "crash");
      await settled(h, crash);
      const f = resultOf(await h.ext.getTask(ctx(), { taskId: crash }));
      expect(GetTaskResultSchema.parse(f)).toMatchObject({
        status: "failed",
        statusMessage: "kaboom",
        error: { code: -32050, message: "kaboom", data: { why: "test" } },
      });
      expect(f).not.toHaveProperty("result");

      const asked = await startTask(h, "ask");
      await h.service.waitFor(ALICE, asked, (t) => t.status === "input_required");
      const i = resultOf(await h.ext.getTask(ctx(), { taskId: asked }));
      expect(GetTaskResultSchema.parse(i)).toMatchObject({ status: "input_required" });
      expect(Object.keys((i as { inputRequests: object }).inputRequests).sort()).toEqual([
        "first",
        "second",
      ]);

      resultOf(await h.ext.cancelTask(ctx(), { taskId: asked }));
      await settled(h, asked);
      expect(
        GetTaskResultSchema.parse(resultOf(await h.ext.getTask(ctx(), { taskId: asked }))),
      ).toMatchObject({
        status: "cancelled",
      });
    });
  });

  describe("tasks/update", () => {
    it("accepts partial answers, ignores unknown and answered keys, and resumes the task", async () => {
      const taskId = await startTask(h, "ask");
      await h.service.waitFor(ALICE, taskId, (t) => t.status === "input_required");
      const ack = resultOf(
        await h.ext.updateTask(
          ctx(ALICE, {
            inputResponses: { first: { action: "accept", content: { n: 1 } }, bogus: {} },
          }),
          {
            taskId,
          },
        ),
      );
      expect(AckResultSchema.parse(ack)).toEqual({ resultType: "complete" });
      const partial = resultOf(await h.ext.getTask(ctx(), { taskId })) as {
        status: string;
        inputRequests: object;
      };
      expect(partial.status).toBe("input_required");
      expect(Object.keys(partial.inputRequests)).toEqual(["second"]);
      // Answering "first" again is ignored; params.inputResponses is read when not lifted.
      resultOf(
        await h.ext.updateTask(ctx(), {
          taskId,
          inputResponses: {
            first: { action: "decline" },
            second: { action: "accept", content: { n: 2 } },
          },
        }),
      );
      const done = await settled(h, taskId);
      expect(done.status).toBe("completed");
      expect(JSON.stringify(done.outcome)).toContain('\\"n\\":1');
    });

    it("acknowledges input for a finished task", async () => {
      const taskId = await startTask(h, "tool_error");
      await settled(h, taskId);
      expect(
        resultOf(await h.ext.updateTask(ctx(), { taskId, inputResponses: { x: {} } })),
      ).toEqual({
        resultType: "complete",
      });
    });

    it("rejects malformed inputResponses with -32602", async () => {
      const taskId = await startTask(h, "ask");
      expect(
        errorOf(await h.ext.updateTask(ctx(), { taskId, inputResponses: { a: 1 } })).code,
      ).toBe(-32602);
      expect(
        errorOf(await h.ext.updateTask(ctx(ALICE, { inputResponses: { a: "x" } }), { taskId }))
          .code,
      ).toBe(-32602);
    });
  });

  describe("tasks/cancel", () => {
    it("acknowledges at once and the task settles cancelled", async () => {
      const taskId = await startTask(h, "work", { gate: "never" });
      const ack = resultOf(await h.ext.cancelTask(ctx(), { taskId }));
      expect(ack).toEqual({ resultType: "complete" });
      expect((await settled(h, taskId)).status).toBe("cancelled");
    });

    it("acknowledges a terminal task the same way", async () => {
      const taskId = await startTask(h, "tool_error");
      await settled(h, taskId);
      expect(resultOf(await h.ext.cancelTask(ctx(), { taskId }))).toEqual({
        resultType: "complete",
      });
      expect((await h.service.get(ALICE, taskId)).status).toBe("completed");
    });
  });

  describe("errors shared by every tasks/* method", () => {
    const methods = ["getTask", "updateTask", "cancelTask"] as const;

    it("answers -32021 when this request did not declare the extension (before looking at params)", async () => {
      const taskId = await startTask(h, "work", { gate: "e" });
      for (const method of methods) {
        const error = errorOf(await h.ext[method](ctx(ALICE, { capabilities: {} }), { taskId }));
        expect(error.code, method).toBe(-32021);
        expect(error.data).toEqual({ requiredCapabilities: { extensions: { [EXT]: {} } } });
        expect(errorOf(await h.ext[method](ctx(ALICE, { capabilities: {} }), {})).code).toBe(
          -32021,
        );
      }
      h.gates.open("e");
    });

    it("answers -32602 alike for unknown ids and another owner's ids", async () => {
      const taskId = await startTask(h, "work", { gate: "o" });
      for (const method of methods) {
        const unknown = errorOf(await h.ext[method](ctx(), { taskId: "no-such-task" }));
        const foreign = errorOf(await h.ext[method](ctx(BOB), { taskId }));
        expect(unknown.code, method).toBe(-32602);
        expect(foreign.code, method).toBe(-32602);
        expect(foreign.message).toBe(`Task ${taskId} not found`);
        expect(errorOf(await h.ext[method](ctx(), {})).code).toBe(-32602);
      }
      expect((await h.service.get(ALICE, taskId)).cancelRequestedAt).toBeNull();
      h.gates.open("o");
    });

    it("answers -32020 when the Mcp-Name routing header names another task", async () => {
      const taskId = await startTask(h, "work", { gate: "r" });
      for (const method of methods) {
        expect(
          errorOf(await h.ext[method](ctx(ALICE, { routingName: "other" }), { taskId })).code,
          method,
        ).toBe(-32020);
      }
      expect(
        resultOf(await h.ext.getTask(ctx(ALICE, { routingName: taskId }), { taskId })).taskId,
      ).toBe(taskId);
      h.gates.open("r");
    });

    it("answers -32601 for tasks/result and tasks/list", () => {
      expect(errorOf(h.ext.removedMethod("tasks/result")).code).toBe(-32601);
      expect(errorOf(h.ext.removedMethod("tasks/list")).code).toBe(-32601);
    });

    it("maps every core error code in one table, leaking nothing else", () => {
      for (const code of TASK_ERROR_CODES) {
        const mapped = taskFailureToRpc(new TaskError(code, `m-${code}`));
        expect([-32602, -32603]).toContain(mapped.code);
        // An unreachable store's message names the database: clients get a plain one.
        if (code !== "store_unavailable") expect(mapped.message).toBe(`m-${code}`);
      }
      expect(taskFailureToRpc(new TaskError("not_found_or_unauthorized", "x")).code).toBe(-32602);
      expect(taskFailureToRpc(new TaskError("store_unavailable", "x"))).toMatchObject({
        code: -32603,
        data: { reason: "store_unavailable", retryAfterMs: 1000 },
      });
      expect(taskFailureToRpc(new Error("SELECT * FROM secrets"))).toEqual({
        code: -32603,
        message: "Internal error",
      });
    });
  });
});
