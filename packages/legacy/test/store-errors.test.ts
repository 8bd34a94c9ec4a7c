// How store refusals and outages reach a 2025-11-25 client through this facade (the policy
// itself, core's `failureMapping`, is tested in core): `store_full` names its quota, and an
// unreachable store's detail goes to `onError`, never to the client.
import {
  isRpcError,
  type RpcOutcome,
  STORE_RETRY_AFTER_MS,
  STORE_UNAVAILABLE_MESSAGE,
} from "@mcp-tasks/core";
import { MemoryTaskStore, type MemoryTaskStoreOptions } from "@mcp-tasks/store-memory";
import { afterEach, expect, it } from "vitest";
import { jsonRpcCodeOf } from "../src/errors.js";
import { LegacyTaskHandlers } from "../src/index.js";
import { SdkTaskStore } from "../src/sdk-task-store.js";
import { alice, bob, Gate, type Stack, stack } from "./fixtures.js";

const UNAVAILABLE = {
  code: -32603,
  message: STORE_UNAVAILABLE_MESSAGE,
  data: { reason: "store_unavailable", retryAfterMs: STORE_RETRY_AFTER_MS },
};

function errorOf<T>(outcome: RpcOutcome<T>) {
  if (!isRpcError(outcome)) throw new Error(`expected an error, got ${JSON.stringify(outcome)}`);
  return outcome.error;
}

const opened: { s: Stack; store: MemoryTaskStore }[] = [];
afterEach(async () => {
  for (const { s, store } of opened.splice(0)) {
    s.runner.stopClaiming();
    s.runner.abortAll();
    await s.runner.drain();
    await store.close();
  }
});

/** Handlers over a fresh memory store; `call` starts a task whose text is `blob`. */
function open(options: MemoryTaskStoreOptions = {}) {
  const store = new MemoryTaskStore({ sweepIntervalMs: 0, ...options });
  const s = stack(store);
  s.gates.set("never", new Gate());
  const reported: unknown[] = [];
  const handlers = new LegacyTaskHandlers({ ...s, onError: (error) => reported.push(error) });
  opened.push({ s, store });
  const call = (who = alice, blob = "") =>
    handlers.callTool(
      { owner: who },
      { name: "slow_echo", arguments: { text: blob, gate: "never" }, task: {} },
    );
  /** Ends the runs (so none retries through the outage), then closes the store. */
  const storeDown = async () => {
    s.runner.stopClaiming();
    s.runner.abortAll();
    await s.runner.drain();
    await store.close();
  };
  return { handlers, service: s.service, reported, call, storeDown };
}

it("maps store_full and store_unavailable to -32603 on purpose (not -32000)", () => {
  expect(jsonRpcCodeOf("store_full")).toBe(-32603);
  expect(jsonRpcCodeOf("store_unavailable")).toBe(-32603);
});

it("answers a quota with -32603, data.reason store_full, the quota and its limit", async () => {
  const { call } = open({ maxBytesPerOwner: 1000 });
  expect(isRpcError(await call(alice, "x".repeat(600)))).toBe(false);
  expect(errorOf(await call(alice, "x".repeat(600)))).toMatchObject({
    code: -32603,
    data: { reason: "store_full", quota: "maxBytesPerOwner", limit: 1000 },
  });
  expect(isRpcError(await call(bob, "x".repeat(600)))).toBe(false);
});

it("tells the client to retry when the store is unavailable, and reports the detail", async () => {
  const { handlers, reported, call, storeDown } = open();
  const created = await call();
  if (isRpcError(created)) throw new Error(created.error.message);
  const taskId = (created.result as { task: { taskId: string } }).task.taskId;
  await storeDown();
  const outcomes = [
    await handlers.getTask({ owner: alice }, { taskId }),
    await handlers.listTasks({ owner: alice }, {}),
    await handlers.cancelTask({ owner: alice }, { taskId }),
    await call(),
  ];
  for (const outcome of outcomes) expect(errorOf(outcome)).toEqual(UNAVAILABLE);
  expect(reported).toHaveLength(outcomes.length);
  for (const error of reported) expect(String(error)).toContain("the memory store was closed");
});

it("the SDK drop-in store answers the same way, and reports the detail", async () => {
  const { service, storeDown } = open({ maxTasksPerOwner: 1 });
  const reported: unknown[] = [];
  const sdkStore = new SdkTaskStore({
    service,
    ownerOf: () => alice,
    onError: (error: unknown) => reported.push(error),
  });
  const request = { method: "tools/call", params: { name: "slow_echo", arguments: {} } };
  await sdkStore.createTask({ ttl: 60_000 }, 1, request as never, "s1");
  await expect(
    sdkStore.createTask({ ttl: 60_000 }, 2, request as never, "s1"),
  ).rejects.toMatchObject({
    code: -32603,
    data: { reason: "store_full", quota: "maxTasksPerOwner", limit: 1 },
  });
  await storeDown();
  await expect(
    sdkStore.createTask({ ttl: 60_000 }, 3, request as never, "s1"),
  ).rejects.toMatchObject(UNAVAILABLE);
  expect(reported).toHaveLength(1);
  sdkStore.close();
});
