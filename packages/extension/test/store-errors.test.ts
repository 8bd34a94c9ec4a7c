// How store refusals and outages reach a 2026-07-28 client through this facade (the policy
// itself, core's `failureMapping`, is tested in core): `store_full` names its quota, and an
// unreachable store's detail goes to the extension's `onError`, never to the client.
import {
  isRpcError,
  STORE_RETRY_AFTER_MS,
  STORE_UNAVAILABLE_MESSAGE,
  TaskRunner,
  TaskService,
} from "@mcp-tasks/core";
import { MemoryTaskStore, type MemoryTaskStoreOptions } from "@mcp-tasks/store-memory";
import { afterEach, expect, it } from "vitest";
import { TasksExtension } from "../src/index.js";
import { ALICE, BOB, ctx, errorOf, Gates, tools } from "./fixtures.js";

const opened: { runner: TaskRunner; store: MemoryTaskStore }[] = [];
afterEach(async () => {
  for (const { runner, store } of opened.splice(0)) {
    runner.stopClaiming();
    runner.abortAll();
    await runner.drain();
    await store.close();
  }
});

/** The extension over a fresh memory store; `call` starts a task holding `blob`. */
function open(options: MemoryTaskStoreOptions = {}) {
  const store = new MemoryTaskStore({ sweepIntervalMs: 0, ...options });
  const service = new TaskService({ store });
  const runner = new TaskRunner({ service, onError: () => {} });
  const reported: unknown[] = [];
  const ext = new TasksExtension({
    service,
    runner,
    tools: tools(new Gates()),
    onError: (error) => reported.push(error),
  });
  opened.push({ runner, store });
  // `work` waits on the gate named by its argument, which nobody opens.
  const call = (who = ALICE, blob = "never") =>
    ext.callTool(ctx(who), { name: "work", arguments: { gate: blob } });
  return { ext, store, runner, reported, call };
}

it("answers a quota with -32603, data.reason store_full, the quota and its limit", async () => {
  const { call } = open({ maxBytesPerOwner: 1000 });
  expect(isRpcError(await call(ALICE, "x".repeat(600)))).toBe(false);
  expect(errorOf(await call(ALICE, "y".repeat(600)))).toMatchObject({
    code: -32603,
    data: { reason: "store_full", quota: "maxBytesPerOwner", limit: 1000 },
  });
  // Another owner has a quota of their own.
  expect(isRpcError(await call(BOB, "z".repeat(600)))).toBe(false);
});

it("tells the client to retry when the store is unavailable, and reports the detail", async () => {
  const { ext, store, runner, reported, call } = open();
  const created = await call();
  if (isRpcError(created)) throw new Error(created.error.message);
  const taskId = (created.result as { taskId: string }).taskId;
  // The run ends first, so that it does not retry its cancellation through the outage.
  runner.stopClaiming();
  runner.abortAll();
  await runner.drain();
  await store.close();
  const outcomes = [
    await ext.getTask(ctx(ALICE, { routingName: taskId }), { taskId }),
    await ext.cancelTask(ctx(ALICE, { routingName: taskId }), { taskId }),
    await call(),
  ];
  for (const outcome of outcomes) {
    expect(errorOf(outcome)).toEqual({
      code: -32603,
      message: STORE_UNAVAILABLE_MESSAGE,
      data: { reason: "store_unavailable", retryAfterMs: STORE_RETRY_AFTER_MS },
    });
  }
  expect(reported).toHaveLength(outcomes.length);
  for (const error of reported) expect(String(error)).toContain("the memory store was closed");
});
