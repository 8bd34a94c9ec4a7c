// How store refusals and outages reach a 2026-07-28 client: `store_full` names the quota it
// hit, and an unreachable store's detail (driver text, the database's address) goes to the
// extension's `onError`, never to the client.
import {
  isRpcError,
  owner,
  type RpcOutcome,
  STORE_RETRY_AFTER_MS,
  STORE_UNAVAILABLE_MESSAGE,
  TaskRunner,
  TaskService,
  type ToolDefinition,
} from "@mcp-tasks/core";
import { taskErrors } from "@mcp-tasks/core/store";
import { MemoryTaskStore, type MemoryTaskStoreOptions } from "@mcp-tasks/store-memory";
import { afterEach, describe, expect, it } from "vitest";
import { taskFailureToRpc } from "../src/errors.js";
import { TasksExtension } from "../src/index.js";
import { ctx } from "./fixtures.js";

const ALICE = owner({ principalId: "alice", tenantId: "acme" });
const BOB = owner({ principalId: "bob", tenantId: "acme" });

/** A task tool that keeps its argument (a blob) and waits until it is cancelled. */
const KEEP: ToolDefinition = {
  name: "keep",
  inputSchema: { type: "object", properties: { blob: { type: "string" } } },
  taskMode: "always",
  run: (_args, context) =>
    new Promise((_resolve, reject) => {
      context.signal.addEventListener("abort", () => reject(context.signal.reason));
    }),
};

function errorOf<T>(outcome: RpcOutcome<T>) {
  if (!isRpcError(outcome)) throw new Error(`expected an error, got ${JSON.stringify(outcome)}`);
  return outcome.error;
}

describe("store errors on the 2026-07-28 wire", () => {
  const opened: { runner: TaskRunner; store: MemoryTaskStore }[] = [];

  function open(options: MemoryTaskStoreOptions = {}) {
    const store = new MemoryTaskStore({ sweepIntervalMs: 0, ...options });
    const service = new TaskService({ store });
    const runner = new TaskRunner({ service, onError: () => {} });
    const reported: unknown[] = [];
    const ext = new TasksExtension({
      service,
      runner,
      tools: [KEEP],
      onError: (error) => reported.push(error),
    });
    opened.push({ runner, store });
    const call = (who = ALICE, blob = "") =>
      ext.callTool(ctx(who), { name: "keep", arguments: { blob } });
    return { ext, store, runner, reported, call };
  }

  afterEach(async () => {
    for (const { runner, store } of opened.splice(0)) {
      runner.abortAll();
      await runner.drain();
      await store.close();
    }
  });

  it("answers the byte quota with -32603, data.reason store_full, the quota and its limit", async () => {
    const { call } = open({ maxBytesPerOwner: 1000 });
    expect(isRpcError(await call(ALICE, "x".repeat(600)))).toBe(false);
    const error = errorOf(await call(ALICE, "x".repeat(600)));
    expect(error.code).toBe(-32603);
    expect(error.data).toEqual({ reason: "store_full", quota: "maxBytesPerOwner", limit: 1000 });
    expect(error.message).toContain("maxBytesPerOwner");
    // Another owner has a quota of their own.
    expect(isRpcError(await call(BOB, "x".repeat(600)))).toBe(false);
  });

  it("answers the count quotas the same way, each naming its quota", async () => {
    const perOwner = open({ maxTasksPerOwner: 1 });
    await perOwner.call();
    expect(errorOf(await perOwner.call())).toMatchObject({
      code: -32603,
      data: { reason: "store_full", quota: "maxTasksPerOwner", limit: 1 },
    });
    const total = open({ maxTasks: 1 });
    await total.call(ALICE);
    expect(errorOf(await total.call(BOB))).toMatchObject({
      code: -32603,
      data: { reason: "store_full", quota: "maxTasks", limit: 1 },
    });
  });

  it("tells the client to retry when the store is unavailable, and reports the detail", async () => {
    const { ext, store, runner, reported, call } = open();
    const created = await call();
    if (isRpcError(created)) throw new Error(created.error.message);
    const taskId = (created.result as { taskId: string }).taskId;
    // The run ends first, so that it does not retry its cancellation through the outage.
    runner.abortAll();
    await runner.drain();
    await store.close();
    const outcomes = [
      await ext.getTask(ctx(ALICE, { routingName: taskId }), { taskId }),
      await ext.cancelTask(ctx(ALICE, { routingName: taskId }), { taskId }),
      await call(),
    ];
    for (const outcome of outcomes) {
      const error = errorOf(outcome);
      expect(error).toEqual({
        code: -32603,
        message: STORE_UNAVAILABLE_MESSAGE,
        data: { reason: "store_unavailable", retryAfterMs: STORE_RETRY_AFTER_MS },
      });
    }
    expect(reported).toHaveLength(outcomes.length);
    for (const error of reported) expect(String(error)).toContain("the memory store was closed");
  });

  it("never puts a driver's text or the database's address on the wire", () => {
    const reported: unknown[] = [];
    const cause = taskErrors.storeUnavailable(
      "could not reach PostgreSQL (ECONNREFUSED: connect ECONNREFUSED 127.0.0.1:5432)",
    );
    const wire = taskFailureToRpc(cause, (error) => reported.push(error));
    expect(JSON.stringify(wire)).not.toMatch(/ECONNREFUSED|127\.0\.0\.1|5432|PostgreSQL/);
    expect(wire.data).toEqual({ reason: "store_unavailable", retryAfterMs: STORE_RETRY_AFTER_MS });
    expect(reported).toEqual([cause]);
  });
});
