import {
  isRpcError,
  isTerminal,
  type Owner,
  RpcError,
  type RpcOutcome,
  TaskRunner,
  TaskService,
} from "@mcp-tasks/core";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  type DeliveryChannel,
  type LegacyRequestContext,
  LegacyTaskHandlers,
  LegacyTaskSchema,
  RELATED_TASK_META_KEY,
  type SideRequest,
} from "../src/index.js";
import {
  alice,
  bob,
  fixtureTools,
  Gate,
  memoryStore,
  type StoreFactory,
  type StoreFixture,
} from "./fixtures.js";
import { postgresStore } from "./stores.js";

const factories: StoreFactory[] = [memoryStore, postgresStore];

async function rpcError(promise: Promise<unknown>): Promise<RpcError> {
  const error = await promise.then(
    () => {
      throw new Error("expected a JSON-RPC error");
    },
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(RpcError);
  return error as RpcError;
}

/** The handlers' outcome as a result, or its error thrown as an {@link RpcError}. */
async function unwrap<T>(outcome: Promise<RpcOutcome<T>>): Promise<T> {
  const settled = await outcome;
  if (isRpcError(settled)) throw RpcError.from(settled.error);
  return settled.result;
}

type Extra = Omit<LegacyRequestContext, "owner">;

/** Calls the handlers the way a binding does: the caller's context, then the raw params. */
function caller(handlers: LegacyTaskHandlers) {
  return {
    callTool: (owner: Owner, params: unknown, extra: Extra = {}) =>
      unwrap(handlers.callTool({ owner, ...extra }, params)),
    getTask: (owner: Owner, params: unknown) => unwrap(handlers.getTask({ owner }, params)),
    getTaskResult: (owner: Owner, params: unknown, extra: Extra = {}) =>
      unwrap(handlers.getTaskResult({ owner, ...extra }, params)),
    listTasks: (owner: Owner, params: unknown) => unwrap(handlers.listTasks({ owner }, params)),
    cancelTask: (owner: Owner, params: unknown) => unwrap(handlers.cancelTask({ owner }, params)),
  };
}

/** An in-process channel standing in for a request's stream. */
function channel(
  answer: (request: SideRequest) => Promise<Record<string, unknown>>,
  capabilities: Record<string, unknown> = { elicitation: {}, sampling: {} },
): DeliveryChannel & { sent: SideRequest[] } {
  const sent: SideRequest[] = [];
  return {
    kind: "tasks/result",
    clientCapabilities: capabilities,
    signal: new AbortController().signal,
    sent,
    send: (request) => {
      sent.push(request);
      return answer(request);
    },
  };
}

describe.each(factories)("LegacyTaskHandlers on the $name store", (factory) => {
  let fixture: StoreFixture;
  let service: TaskService;
  let runner: TaskRunner;
  let gates: Map<string, Gate>;
  let handlers: LegacyTaskHandlers;
  let call: ReturnType<typeof caller>;

  function build(ttl: { maxTtlMs?: number; onOutOfRange?: "clamp" | "reject" } = {}) {
    service = new TaskService({
      store: fixture.store,
      pollIntervalMs: 25,
      maxPageSize: 2,
      ttl: { defaultTtlMs: 60_000, maxTtlMs: 120_000, ...ttl },
    });
    runner = new TaskRunner({ service, onError: () => {} });
    gates = new Map();
    handlers = new LegacyTaskHandlers({ service, runner, tools: fixtureTools(gates) });
    call = caller(handlers);
  }

  beforeEach(async () => {
    fixture = await factory.create();
    build();
  });
  afterEach(async () => {
    runner.stopClaiming();
    runner.abortAll();
    await runner.drain();
    await fixture.close();
  });

  async function startGated(who: Owner, gate = `g${gates.size}`) {
    gates.set(gate, new Gate());
    const created = (await call.callTool(who, {
      name: "slow_echo",
      arguments: { text: gate, gate },
      task: {},
    })) as { task: { taskId: string } };
    return { taskId: created.task.taskId, gate: gates.get(gate) as Gate };
  }

  describe("tools/list", () => {
    it("projects never/optional/always to forbidden/optional/required", () => {
      const support = Object.fromEntries(
        handlers.listTools().tools.map((t) => [t.name, t.execution.taskSupport]),
      );
      expect(support).toEqual({
        echo: "forbidden",
        counting_job: "optional",
        slow_echo: "optional",
        confirm: "required",
        ask: "optional",
        greet_later: "required",
        summarize: "required",
        failing_job: "required",
        protocol_error_job: "optional",
      });
    });
  });

  describe("tools/call", () => {
    it("answers a CreateTaskResult with a working task, ISO timestamps and the granted ttl", async () => {
      const result = await call.callTool(alice, {
        name: "slow_echo",
        arguments: { ms: 1 },
        task: { ttl: 30_000 },
      });
      expect(Object.keys(result)).toEqual(["task"]);
      const task = LegacyTaskSchema.parse((result as { task: unknown }).task);
      expect(task.status).toBe("working");
      expect(task.ttl).toBe(30_000);
      expect(task.pollInterval).toBe(25);
      expect(new Date(task.createdAt).toISOString()).toBe(task.createdAt);
    });

    it("uses the default ttl when none is requested and clamps one above the maximum", async () => {
      const plain = (await call.callTool(alice, {
        name: "slow_echo",
        arguments: { ms: 1 },
        task: {},
      })) as { task: { ttl: number | null } };
      expect(plain.task.ttl).toBe(60_000);
      const big = (await call.callTool(alice, {
        name: "slow_echo",
        arguments: { ms: 1 },
        task: { ttl: 10_000_000 },
      })) as { task: { ttl: number | null } };
      expect(big.task.ttl).toBe(120_000);
    });

    it("reports ttl null when the policy keeps tasks without limit", async () => {
      service = new TaskService({
        store: fixture.store,
        ttl: { defaultTtlMs: null, maxTtlMs: null },
      });
      runner = new TaskRunner({ service, onError: () => {} });
      handlers = new LegacyTaskHandlers({ service, runner, tools: fixtureTools() });
      call = caller(handlers);
      const result = (await call.callTool(alice, {
        name: "slow_echo",
        arguments: { ms: 1 },
        task: {},
      })) as { task: Record<string, unknown> };
      expect(result.task).toHaveProperty("ttl", null);
    });

    it("rejects a ttl above the maximum with -32602 under the reject policy", async () => {
      build({ onOutOfRange: "reject" });
      const error = await rpcError(
        call.callTool(alice, { name: "slow_echo", arguments: {}, task: { ttl: 999_999 } }),
      );
      expect(error.code).toBe(-32602);
    });

    it("answers -32601 for a required tool called without a task", async () => {
      const error = await rpcError(call.callTool(alice, { name: "confirm", arguments: {} }));
      expect(error.code).toBe(-32601);
    });

    it("answers -32601 for a forbidden tool called with a task", async () => {
      const error = await rpcError(call.callTool(alice, { name: "echo", arguments: {}, task: {} }));
      expect(error.code).toBe(-32601);
    });

    it("answers -32602 for an unknown tool and for malformed params", async () => {
      expect((await rpcError(call.callTool(alice, { name: "nope" }))).code).toBe(-32602);
      expect((await rpcError(call.callTool(alice, { arguments: {} }))).code).toBe(-32602);
      expect(
        (await rpcError(call.callTool(alice, { name: "slow_echo", task: { ttl: "x" } }))).code,
      ).toBe(-32602);
    });

    it("runs a tool's preflight before creating the task", async () => {
      const ch = channel(async () => ({ action: "accept", content: { name: "Lin" } }));
      const created = (await call.callTool(
        alice,
        { name: "greet_later", task: {} },
        { channel: ch },
      )) as { task: { taskId: string } };
      expect(ch.sent.map((r) => r.method)).toEqual(["elicitation/create"]);
      expect(ch.sent[0]?.params._meta).toBeUndefined();
      const result = await call.getTaskResult(alice, { taskId: created.task.taskId });
      expect(result.content).toEqual([{ type: "text", text: "Hello, Lin!" }]);
      // Without a stream to ask on, the call fails before any task exists.
      const error = await rpcError(call.callTool(bob, { name: "greet_later", task: {} }));
      expect(error.code).toBe(-32603);
      expect((await call.listTasks(bob, {})).tasks).toHaveLength(0);
    });

    it("runs a tool synchronously without a task", async () => {
      expect(await call.callTool(alice, { name: "echo", arguments: { text: "hi" } })).toEqual({
        content: [{ type: "text", text: "hi" }],
      });
      const error = await rpcError(call.callTool(alice, { name: "protocol_error_job" }));
      expect(error.toJSON()).toEqual({
        code: -32050,
        message: "quota exceeded",
        data: { retry: false },
      });
    });
  });

  describe("tasks/get", () => {
    it("returns the caller's task", async () => {
      const { taskId } = await startGated(alice);
      // The handler's first status message is written in the background.
      await service.waitFor(alice, taskId, (t) => t.statusMessage === "working on it");
      const task = await call.getTask(alice, { taskId });
      expect(task).toMatchObject({ taskId, status: "working", statusMessage: "working on it" });
    });

    it("answers unknown and foreign ids with the same -32602", async () => {
      const { taskId } = await startGated(alice);
      const foreign = await rpcError(call.getTask(bob, { taskId }));
      const unknown = await rpcError(call.getTask(bob, { taskId: "no-such-task" }));
      expect(foreign.code).toBe(-32602);
      expect(unknown.code).toBe(-32602);
      expect(foreign.message.replace(taskId, "ID")).toBe(
        unknown.message.replace("no-such-task", "ID"),
      );
      expect((await rpcError(call.getTask(alice, {}))).code).toBe(-32602);
    });
  });

  describe("tasks/result", () => {
    it("blocks until the task is terminal, then answers the original result with related-task _meta", async () => {
      const { taskId, gate } = await startGated(alice, "block");
      const pending = call.getTaskResult(alice, { taskId });
      let settled = false;
      void pending.finally(() => {
        settled = true;
      });
      await service.waitFor(alice, taskId, (t) => t.statusMessage === "working on it");
      expect(settled).toBe(false);
      gate.open();
      expect(await pending).toEqual({
        content: [{ type: "text", text: "echo: block" }],
        _meta: { [RELATED_TASK_META_KEY]: { taskId } },
      });
    });

    it("answers a tool error result as is, the task being failed", async () => {
      const { task } = (await call.callTool(alice, {
        name: "failing_job",
        task: {},
      })) as { task: { taskId: string } };
      const result = await call.getTaskResult(alice, { taskId: task.taskId });
      expect(result).toMatchObject({ isError: true, content: [{ text: "the job failed" }] });
      expect(await call.getTask(alice, { taskId: task.taskId })).toMatchObject({
        status: "failed",
        statusMessage: "the job failed",
      });
      // The store keeps it completed: the mapping is this era's projection.
      expect((await service.get(alice, task.taskId)).status).toBe("completed");
    });

    it("answers the original JSON-RPC error of a failed task", async () => {
      const { task } = (await call.callTool(alice, {
        name: "protocol_error_job",
        task: {},
      })) as { task: { taskId: string } };
      const error = await rpcError(call.getTaskResult(alice, { taskId: task.taskId }));
      expect(error.toJSON()).toEqual({
        code: -32050,
        message: "quota exceeded",
        data: { retry: false },
      });
      expect(await call.getTask(alice, { taskId: task.taskId })).toMatchObject({
        status: "failed",
        statusMessage: "quota exceeded",
      });
    });

    it("answers -32603 for a cancelled task, and -32602 for unknown and foreign ids", async () => {
      const { taskId } = await startGated(alice);
      await call.cancelTask(alice, { taskId });
      const cancelled = await rpcError(call.getTaskResult(alice, { taskId }));
      expect(cancelled).toMatchObject({ code: -32603, data: { status: "cancelled" } });
      expect((await rpcError(call.getTaskResult(bob, { taskId }))).code).toBe(-32602);
      expect((await rpcError(call.getTaskResult(alice, { taskId: "x" }))).code).toBe(-32602);
    });

    it("stops waiting when the request is aborted", async () => {
      const { taskId } = await startGated(alice);
      const abort = new AbortController();
      const pending = call.getTaskResult(alice, { taskId }, { signal: abort.signal });
      abort.abort();
      expect((await rpcError(pending)).code).toBe(-32603);
      expect((await service.get(alice, taskId)).status).toBe("working");
    });

    it("delivers input requests on its channel with related-task _meta and submits the answers", async () => {
      const { task } = (await call.callTool(alice, {
        name: "confirm",
        arguments: { question: "Go?" },
        task: {},
      })) as { task: { taskId: string } };
      const ch = channel(async () => ({ action: "accept", content: { ok: true } }));
      const result = await call.getTaskResult(alice, { taskId: task.taskId }, { channel: ch });
      expect(result.content).toEqual([
        { type: "text", text: 'answer: {"action":"accept","content":{"ok":true}}' },
      ]);
      expect(ch.sent).toHaveLength(1);
      expect(ch.sent[0]?.method).toBe("elicitation/create");
      expect(ch.sent[0]?.params).toMatchObject({
        message: "Go?",
        _meta: { [RELATED_TASK_META_KEY]: { taskId: task.taskId } },
      });
    });

    it("submits a JSON-RPC error answer as an error-shaped response", async () => {
      const { task } = (await call.callTool(alice, {
        name: "summarize",
        task: {},
      })) as { task: { taskId: string } };
      const ch = channel(async () => {
        throw new RpcError(-32600, "sampling refused");
      });
      const result = await call.getTaskResult(alice, { taskId: task.taskId }, { channel: ch });
      expect(result.content).toEqual([
        {
          type: "text",
          text: 'sampled: {"error":{"code":-32600,"message":"sampling refused"}}',
        },
      ]);
    });

    it("fails the task when the store refuses the client's answer, instead of waiting forever", async () => {
      const { task } = (await call.callTool(alice, {
        name: "confirm",
        arguments: { question: "Go?" },
        task: {},
      })) as { task: { taskId: string } };
      // JSON allows U+0000; no store keeps it (core's one rule), whichever store this is.
      const ch = channel(async () => ({ action: "accept", content: { note: "a\u0000b" } }));
      const error = await rpcError(
        call.getTaskResult(alice, { taskId: task.taskId }, { channel: ch }),
      );
      expect(error.code).toBe(-32603);
      expect(error.message).toMatch(
        /answer to input request .* could not be stored: .*U\+0000 at \/answer\/content\/note/,
      );
    });

    it("fails the task when the client lacks the capability an input request needs", async () => {
      const { task } = (await call.callTool(alice, {
        name: "confirm",
        task: {},
      })) as { task: { taskId: string } };
      const ch = channel(async () => ({}), { sampling: {} });
      const error = await rpcError(
        call.getTaskResult(alice, { taskId: task.taskId }, { channel: ch }),
      );
      expect(error.code).toBe(-32603);
      expect(error.message).toContain("'elicitation' capability");
      expect(ch.sent).toHaveLength(0);
    });

    it("sends a key again on a second channel only after the first one gave it up", async () => {
      const { task } = (await call.callTool(alice, {
        name: "confirm",
        task: {},
      })) as { task: { taskId: string } };
      const taskId = task.taskId;
      await service.waitFor(alice, taskId, (t) => t.status === "input_required");
      const firstAbort = new AbortController();
      const firstSent = new Gate();
      const first: DeliveryChannel & { sent: SideRequest[] } = {
        ...channel(() => {
          firstSent.open();
          return new Promise((_, reject) =>
            firstAbort.signal.addEventListener("abort", () => reject(new Error("gone"))),
          );
        }),
        signal: firstAbort.signal,
      };
      const firstResult = call.getTaskResult(
        alice,
        { taskId },
        { channel: first, signal: firstAbort.signal },
      );
      await firstSent.opened;
      const second = channel(async () => ({ action: "decline" }));
      const secondResult = call.getTaskResult(alice, { taskId }, { channel: second });
      // Let the second request read the task and offer what it may.
      await service.get(alice, taskId);
      expect(second.sent).toHaveLength(0);
      firstAbort.abort();
      await rpcError(firstResult);
      const result = await secondResult;
      expect(result.content).toEqual([{ type: "text", text: 'answer: {"action":"decline"}' }]);
      expect(second.sent).toHaveLength(1);
    });
  });

  describe("tasks/list", () => {
    it("lists only the caller's tasks, page by page with an opaque cursor", async () => {
      const mine = [];
      for (let i = 0; i < 3; i++) mine.push((await startGated(alice)).taskId);
      const theirs = (await startGated(bob)).taskId;
      const first = await call.listTasks(alice, undefined);
      expect(first.tasks).toHaveLength(2);
      expect(typeof first.nextCursor).toBe("string");
      const second = await call.listTasks(alice, { cursor: first.nextCursor });
      const ids = [...first.tasks, ...second.tasks].map((t) => t.taskId);
      expect(ids).toEqual(mine);
      expect(ids).not.toContain(theirs);
      expect(second.nextCursor).toBeUndefined();
      for (const task of [...first.tasks, ...second.tasks]) LegacyTaskSchema.parse(task);
    });

    it("answers -32602 for a bad cursor", async () => {
      const error = await rpcError(call.listTasks(alice, { cursor: "not-a-cursor" }));
      expect(error.code).toBe(-32602);
    });
  });

  describe("tasks/cancel", () => {
    it("makes the task cancelled before replying and discards the handler's late outcome", async () => {
      const { taskId, gate } = await startGated(alice);
      const task = await call.cancelTask(alice, { taskId });
      expect(task).toMatchObject({ taskId, status: "cancelled" });
      expect((await service.get(alice, taskId)).status).toBe("cancelled");
      gate.open();
      await runner.settled(taskId);
      expect((await service.get(alice, taskId)).status).toBe("cancelled");
    });

    it("answers -32602 for a terminal, unknown or foreign task", async () => {
      const { taskId, gate } = await startGated(alice);
      expect((await rpcError(call.cancelTask(bob, { taskId }))).code).toBe(-32602);
      gate.open();
      await service.waitFor(alice, taskId, (t) => isTerminal(t.status));
      const terminal = await rpcError(call.cancelTask(alice, { taskId }));
      expect(terminal.code).toBe(-32602);
      expect(terminal.message).toContain("completed");
      expect((await rpcError(call.cancelTask(alice, { taskId: "x" }))).code).toBe(-32602);
    });
  });
});
