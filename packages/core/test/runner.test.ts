import { setTimeout as sleep } from "node:timers/promises";
import { describe, expect, it, vi } from "vitest";
import {
  owner,
  STORE_RETRY_AFTER_MS,
  STORE_UNAVAILABLE_MESSAGE,
  TaskCancelledError,
  type TaskContext,
  TaskError,
  TaskRunner,
  TaskService,
  type TaskStore,
  toJsonRpcError,
} from "../src/index.js";
import { taskErrors } from "../src/store-api.js";
import { ReferenceTaskStore } from "./support/reference-store.js";

const alice = owner({ principalId: "alice" });
const era = "2026-07-28" as const;

function node(
  store: TaskStore,
  runnerOptions: Partial<ConstructorParameters<typeof TaskRunner>[0]> = {},
) {
  const service = new TaskService({ store, waitRecheckMs: 0 });
  const runner = new TaskRunner({ service, settleRetryMs: 1, ...runnerOptions });
  return { service, runner };
}

function setup(runnerOptions: Partial<ConstructorParameters<typeof TaskRunner>[0]> = {}) {
  const store = new ReferenceTaskStore();
  return { store, ...node(store, runnerOptions) };
}

/** A promise plus its resolver, to hold a handler at a known point. */
function gate<T = void>() {
  let open!: (value: T) => void;
  const opened = new Promise<T>((resolve) => {
    open = resolve;
  });
  return { open, opened };
}

function untilAborted(signal: AbortSignal): Promise<never> {
  return new Promise((_, reject) => {
    if (signal.aborted) reject(signal.reason);
    signal.addEventListener("abort", () => reject(signal.reason), { once: true });
  });
}

describe("TaskRunner", () => {
  it("returns the created task at once and stores the handler's result", async () => {
    const { service, runner } = setup();
    const release = gate();
    let seen: { args: unknown; ctx?: TaskContext } = { args: null };
    const created = await runner.start(alice, {
      era,
      request: { toolName: "add", arguments: { a: 2, b: 3 } },
      handler: async (args, ctx) => {
        seen = { args, ctx };
        await release.opened;
        return { content: [{ type: "text", text: String(Number(args.a) + Number(args.b)) }] };
      },
    });
    expect(created.status).toBe("working");
    expect((await service.get(alice, created.taskId)).status).toBe("working");
    release.open();
    await runner.settled(created.taskId);
    const done = await service.get(alice, created.taskId);
    expect(done.status).toBe("completed");
    expect(done.outcome).toEqual({
      kind: "result",
      result: { content: [{ type: "text", text: "5" }] },
    });
    expect(seen.args).toEqual({ a: 2, b: 3 });
    expect(seen.ctx?.taskId).toBe(created.taskId);
    expect(seen.ctx?.owner).toEqual(alice);
    expect(runner.active).toBe(0);
  });

  it("fails the task with -32603 when the handler throws a plain error", async () => {
    const { service, runner } = setup();
    const t = await runner.start(alice, {
      era,
      request: { toolName: "x", arguments: {} },
      handler: () => {
        throw new Error("disk on fire");
      },
    });
    await runner.settled(t.taskId);
    const done = await service.get(alice, t.taskId);
    expect(done.status).toBe("failed");
    expect(done.outcome).toEqual({
      kind: "error",
      error: { code: -32603, message: "disk on fire" },
    });
  });

  it("keeps an error's own JSON-RPC code and data", async () => {
    const { service, runner } = setup();
    const t = await runner.start(alice, {
      era,
      request: { toolName: "x", arguments: {} },
      handler: () => {
        throw Object.assign(new Error("Invalid params"), { code: -32602, data: { field: "n" } });
      },
    });
    await runner.settled(t.taskId);
    expect((await service.get(alice, t.taskId)).outcome).toEqual({
      kind: "error",
      error: { code: -32602, message: "Invalid params", data: { field: "n" } },
    });
  });

  it("stores no driver text, errno or address in a task failed by a store outage", async () => {
    const reported: unknown[] = [];
    const { service, runner } = setup({ onError: (error) => reported.push(error) });
    const outage = taskErrors.storeUnavailable(
      "setStatusMessage could not reach PostgreSQL (ECONNRESET: read ECONNRESET 10.0.0.7:5432)",
    );
    const t = await runner.start(alice, {
      era,
      request: { toolName: "x", arguments: {} },
      handler: () => {
        // E.g. the handler's own read of another task, through the service.
        throw outage;
      },
    });
    await runner.settled(t.taskId);
    const done = await service.get(alice, t.taskId);
    expect(done.status).toBe("failed");
    expect(done.outcome).toEqual({
      kind: "error",
      error: {
        code: -32603,
        message: STORE_UNAVAILABLE_MESSAGE,
        data: { reason: "store_unavailable", retryAfterMs: STORE_RETRY_AFTER_MS },
      },
    });
    expect(JSON.stringify(done)).not.toMatch(/ECONNRESET|PostgreSQL|10\.0\.0\.7|5432/);
    // The detail goes to onError instead.
    expect(reported).toEqual([outage]);
  });

  it("fails the task when the handler returns no result object", async () => {
    const { service, runner } = setup();
    const t = await runner.start(alice, {
      era,
      request: { toolName: "x", arguments: {} },
      handler: () => "oops" as unknown as Record<string, unknown>,
    });
    await runner.settled(t.taskId);
    expect((await service.get(alice, t.taskId)).status).toBe("failed");
  });

  it("toJsonRpcError copes with anything thrown", () => {
    expect(toJsonRpcError("bad")).toEqual({ code: -32603, message: "bad" });
    expect(toJsonRpcError(undefined)).toEqual({ code: -32603, message: "Internal error" });
    expect(toJsonRpcError({ code: 1.5, message: "x" })).toEqual({ code: -32603, message: "x" });
    expect(toJsonRpcError(taskErrors.storeUnavailable("ECONNREFUSED 127.0.0.1:5432"))).toEqual({
      code: -32603,
      message: STORE_UNAVAILABLE_MESSAGE,
      data: { reason: "store_unavailable", retryAfterMs: STORE_RETRY_AFTER_MS },
    });
  });

  describe("input", () => {
    it("parks in input_required and resumes with the answers by name", async () => {
      const { service, runner } = setup();
      const t = await runner.start(alice, {
        era,
        request: { toolName: "confirm_delete", arguments: { filename: "a.txt" } },
        handler: async (args, ctx) => {
          const { confirm } = await ctx.requireInput(
            {
              confirm: {
                method: "elicitation/create",
                params: { message: `Delete ${args.filename}?` },
              },
            },
            "waiting for confirmation",
          );
          return { content: [{ type: "text", text: JSON.stringify(confirm) }] };
        },
      });
      const asked = await service.waitFor(alice, t.taskId, (x) => x.status === "input_required");
      expect(asked.statusMessage).toBe("waiting for confirmation");
      expect(asked.inputRequests).toEqual({
        confirm: { method: "elicitation/create", params: { message: "Delete a.txt?" } },
      });
      await service.submitInput(alice, t.taskId, { confirm: { action: "accept" } });
      await runner.settled(t.taskId);
      const done = await service.get(alice, t.taskId);
      expect(done.status).toBe("completed");
      expect(done.outcome).toEqual({
        kind: "result",
        result: { content: [{ type: "text", text: '{"action":"accept"}' }] },
      });
      expect(done.inputResponses).toEqual({});
    });

    it("waits for every answer when several are pending, accepting them one by one", async () => {
      const { service, runner } = setup();
      const t = await runner.start(alice, {
        era,
        request: { toolName: "multi_input", arguments: {} },
        handler: async (_args, ctx) => {
          const answers = await ctx.requireInput({
            name: { method: "elicitation/create" },
            color: { method: "elicitation/create" },
          });
          return { answers };
        },
      });
      await service.waitFor(alice, t.taskId, (x) => x.status === "input_required");
      await service.submitInput(alice, t.taskId, { color: { c: "blue" } });
      const half = await service.waitFor(
        alice,
        t.taskId,
        (x) => Object.keys(x.inputRequests).length === 1,
      );
      expect(half.status).toBe("input_required");
      await service.submitInput(alice, t.taskId, { name: { n: "Ada" } });
      await runner.settled(t.taskId);
      expect((await service.get(alice, t.taskId)).outcome).toEqual({
        kind: "result",
        result: { answers: { name: { n: "Ada" }, color: { c: "blue" } } },
      });
    });

    it("mints a fresh key when a handler reuses a name", async () => {
      const { service, runner } = setup();
      const t = await runner.start(alice, {
        era,
        request: { toolName: "x", arguments: {} },
        handler: async (_args, ctx) => {
          const first = await ctx.requireInput({ q: { method: "elicitation/create" } });
          const second = await ctx.requireInput({ q: { method: "elicitation/create" } });
          return { first, second };
        },
      });
      await service.waitFor(alice, t.taskId, (x) => "q" in x.inputRequests);
      await service.submitInput(alice, t.taskId, { q: { n: 1 } });
      await service.waitFor(alice, t.taskId, (x) => "q-2" in x.inputRequests);
      await service.submitInput(alice, t.taskId, { "q-2": { n: 2 } });
      await runner.settled(t.taskId);
      expect((await service.get(alice, t.taskId)).outcome).toEqual({
        kind: "result",
        result: { first: { q: { n: 1 } }, second: { q: { n: 2 } } },
      });
    });

    it("a cancel while waiting for input rejects requireInput and ends cancelled", async () => {
      const { service, runner } = setup();
      const t = await runner.start(alice, {
        era,
        request: { toolName: "x", arguments: {} },
        handler: async (_args, ctx) => {
          await ctx.requireInput({ q: { method: "elicitation/create" } });
          return { unreachable: true };
        },
      });
      await service.waitFor(alice, t.taskId, (x) => x.status === "input_required");
      await service.requestCancel(alice, t.taskId);
      await runner.settled(t.taskId);
      expect((await service.get(alice, t.taskId)).status).toBe("cancelled");
    });
  });

  describe("cancellation", () => {
    it("cooperative: the signal fires and a handler that stops ends cancelled", async () => {
      const { service, runner } = setup();
      const t = await runner.start(alice, {
        era,
        request: { toolName: "x", arguments: {} },
        handler: (_args, ctx) => untilAborted(ctx.signal),
      });
      const requested = await service.requestCancel(alice, t.taskId);
      expect(requested.status).toBe("working");
      await runner.settled(t.taskId);
      const done = await service.get(alice, t.taskId);
      expect(done.status).toBe("cancelled");
    });

    it("cooperative: a handler that finishes anyway keeps its outcome", async () => {
      const { service, runner } = setup();
      const t = await runner.start(alice, {
        era,
        request: { toolName: "x", arguments: {} },
        handler: async (_args, ctx) => {
          await new Promise((resolve) =>
            ctx.signal.addEventListener("abort", resolve, { once: true }),
          );
          return { content: [{ type: "text", text: "finished first" }] };
        },
      });
      await service.requestCancel(alice, t.taskId);
      await runner.settled(t.taskId);
      expect((await service.get(alice, t.taskId)).status).toBe("completed");
    });

    it("immediate: cancelled before the caller hears back; the late result is discarded", async () => {
      const errors: unknown[] = [];
      const { service, runner } = setup({ onError: (e) => errors.push(e) });
      const aborted = gate();
      const t = await runner.start(alice, {
        era: "2025-11-25",
        request: { toolName: "x", arguments: {} },
        handler: async (_args, ctx) => {
          await new Promise((resolve) =>
            ctx.signal.addEventListener("abort", resolve, { once: true }),
          );
          aborted.open();
          return { content: [{ type: "text", text: "too late" }] };
        },
      });
      const cancelled = await service.cancelNow(alice, t.taskId);
      expect(cancelled.status).toBe("cancelled");
      await aborted.opened;
      await runner.settled(t.taskId);
      const final = await service.get(alice, t.taskId);
      expect(final.status).toBe("cancelled");
      expect(final.outcome).toBeNull();
      expect(errors).toEqual([]);
    });

    it("a handler that first reads its signal after the cancel request finds it aborted", async () => {
      // The signal is made when first read: a request seen before that still reaches it.
      const { service, runner } = setup();
      const go = gate();
      const started = gate<TaskContext>();
      const seen = gate<{ aborted: boolean; reason: unknown }>();
      const t = await runner.start(alice, {
        era,
        request: { toolName: "x", arguments: {} },
        handler: async (_args, ctx) => {
          started.open(ctx);
          await go.opened;
          seen.open({ aborted: ctx.signal.aborted, reason: ctx.signal.reason });
          throw ctx.signal.reason;
        },
      });
      const ctx = await started.opened;
      let relayed = 0;
      runner.onProgress(() => relayed++, t.taskId);
      await service.requestCancel(alice, t.taskId);
      // The run has heard of the request once it stops relaying progress (read without the
      // signal).
      await vi.waitFor(() => {
        const before = relayed;
        ctx.reportProgress(1);
        expect(relayed).toBe(before);
      });
      go.open();
      const { aborted, reason } = await seen.opened;
      expect(aborted).toBe(true);
      expect(reason).toBeInstanceOf(TaskCancelledError);
      await runner.settled(t.taskId);
      expect((await service.get(alice, t.taskId)).status).toBe("cancelled");
    });

    it("reaches a handler running on another node that shares the store", async () => {
      const store = new ReferenceTaskStore();
      const a = node(store);
      const b = node(store);
      const t = await a.runner.start(alice, {
        era,
        request: { toolName: "x", arguments: {} },
        handler: (_args, ctx) => untilAborted(ctx.signal),
      });
      await b.service.requestCancel(alice, t.taskId);
      await a.runner.settled(t.taskId);
      expect((await b.service.get(alice, t.taskId)).status).toBe("cancelled");
    });

    it("setStatusMessage after the task ended is a quiet no-op", async () => {
      const { service, runner } = setup();
      const ended = gate<TaskContext>();
      const t = await runner.start(alice, {
        era,
        request: { toolName: "x", arguments: {} },
        handler: async (_args, ctx) => {
          ended.open(ctx);
          await untilAborted(ctx.signal).catch(() => {});
          await ctx.setStatusMessage("still here?");
          return {};
        },
      });
      await ended.opened;
      await service.cancelNow(alice, t.taskId);
      await runner.settled(t.taskId);
      expect((await service.get(alice, t.taskId)).statusMessage).toBe(
        "The task was cancelled by request.",
      );
    });
  });

  it("hands progress reports to this node's listeners while the task runs, not after", async () => {
    const { runner } = setup();
    const seen: unknown[] = [];
    const all: string[] = [];
    runner.onProgress((p) => all.push(p.taskId));
    const go = gate();
    const done = gate<TaskContext>();
    const t = await runner.start(alice, {
      era: "2025-11-25",
      request: { toolName: "x", arguments: {} },
      handler: async (_args, ctx) => {
        await go.opened;
        ctx.reportProgress(1, 3, "one");
        ctx.reportProgress(Number.NaN);
        ctx.reportProgress(2, 3);
        done.open(ctx);
        return {};
      },
    });
    const stop = runner.onProgress((p) => seen.push(p), t.taskId);
    go.open();
    const ctx = await done.opened;
    await runner.settled(t.taskId);
    ctx.reportProgress(3, 3, "too late");
    stop();
    expect(seen).toEqual([
      { taskId: t.taskId, progress: 1, total: 3, message: "one" },
      { taskId: t.taskId, progress: 2, total: 3 },
    ]);
    expect(all).toEqual([t.taskId, t.taskId]);
  });

  it("drain waits for every running handler", async () => {
    const { service, runner } = setup();
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      const t = await runner.start(alice, {
        era,
        request: { toolName: "x", arguments: {} },
        handler: async () => {
          await sleep(5 * i);
          return { i };
        },
      });
      ids.push(t.taskId);
    }
    expect(runner.active).toBe(5);
    await runner.drain();
    expect(runner.active).toBe(0);
    for (const id of ids) expect((await service.get(alice, id)).status).toBe("completed");
  });

  it("retries storing an outcome while the store is unavailable", async () => {
    const inner = new ReferenceTaskStore();
    let failures = 2;
    const flaky = new Proxy(inner, {
      get(target, prop, receiver) {
        const value = Reflect.get(target, prop, receiver);
        if (prop === "complete") {
          return async (...args: Parameters<TaskStore["complete"]>) => {
            if (failures-- > 0)
              throw new TaskError("store_unavailable", "The task store is unavailable: down");
            return target.complete(...args);
          };
        }
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
    const { service, runner } = node(flaky);
    const t = await runner.start(alice, {
      era,
      request: { toolName: "x", arguments: {} },
      handler: () => ({ ok: 1 }),
    });
    await runner.settled(t.taskId);
    expect((await service.get(alice, t.taskId)).status).toBe("completed");
  });

  it("notices a cancel request whose change event never arrived", async () => {
    const inner = new ReferenceTaskStore();
    // A store whose change feed drops every cancel_requested event, as a broken
    // notification channel would.
    const lossy = new Proxy(inner, {
      get(target, prop, receiver) {
        if (prop === "watch") {
          return (listener: Parameters<TaskStore["watch"]>[0], taskId?: string) =>
            target.watch((change) => {
              if (change.kind !== "cancel_requested") listener(change);
            }, taskId);
        }
        const value = Reflect.get(target, prop, receiver);
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
    const { service, runner } = node(lossy, { recheckMs: 5 });
    const t = await runner.start(alice, {
      era,
      request: { toolName: "x", arguments: {} },
      handler: (_args, ctx) => untilAborted(ctx.signal),
    });
    await service.requestCancel(alice, t.taskId);
    await runner.settled(t.taskId);
    expect((await service.get(alice, t.taskId)).status).toBe("cancelled");
  });

  it("renews its lease while the handler runs", async () => {
    const { service, runner } = setup({
      lease: { holder: "node-a", durationMs: 60_000, renewEveryMs: 5 },
    });
    const t = await runner.start(alice, {
      era,
      request: { toolName: "x", arguments: {} },
      handler: (_args, ctx) => untilAborted(ctx.signal),
    });
    expect(t.execution).toMatchObject({ holder: "node-a", fencingToken: 1, attempt: 1 });
    const first = t.execution.leaseExpiresAt as number;
    let renewed = first;
    for (let i = 0; i < 200 && renewed <= first; i++) {
      await sleep(5);
      renewed = (await service.get(alice, t.taskId)).execution.leaseExpiresAt as number;
    }
    expect(renewed).toBeGreaterThan(first);
    runner.stopClaiming();
    runner.abortAll();
    await runner.drain();
  });
});
