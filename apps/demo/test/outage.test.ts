import { isRpcError, owner, TaskRunner, TaskService, type ToolDefinition } from "@mcp-tasks/core";
import {
  CLIENT_CAPABILITIES_META_KEY,
  handleTaskListenRequest,
  MODERN_PROTOCOL_VERSION,
  PROTOCOL_VERSION_META_KEY,
  TasksExtension,
} from "@mcp-tasks/extension";
import { LegacyTaskHandlers } from "@mcp-tasks/legacy";
import type { DrizzleTaskStore } from "@mcp-tasks/store-drizzle";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DATABASE_URL, dropSchema, schemaName } from "./helpers/process.js";
import { PostgresRelay, storeBehindRelay } from "./helpers/relay.js";
import { WITH_EXT } from "./helpers/wire.js";

const alice = owner({ principalId: "alice", tenantId: "acme" });
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Reads an SSE body as it arrives: the JSON messages so far, and whether it has ended. */
function readEvents(body: ReadableStream<Uint8Array>) {
  const state = { messages: [] as Record<string, unknown>[], ended: false };
  const done = (async () => {
    const decoder = new TextDecoder();
    let pending = "";
    for await (const chunk of body) {
      pending += decoder.decode(chunk, { stream: true });
      const frames = pending.split("\n\n");
      pending = frames.pop() ?? "";
      for (const frame of frames) {
        const data = frame.split("\n").find((line) => line.startsWith("data:"));
        if (data !== undefined) state.messages.push(JSON.parse(data.slice(5)));
      }
    }
    state.ended = true;
  })();
  return Object.assign(state, { done });
}

async function until(condition: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error("timed out waiting");
    await sleep(20);
  }
}

/**
 * Both eras' ways of following a task, over real PostgreSQL behind a relay that the test
 * cuts for a few seconds: the store answers `store_unavailable` meanwhile. A 2026-07-28
 * task subscription and a blocked 2025-11-25 `tasks/result` must both ride it out and
 * deliver the terminal state once the database is back.
 */
describe("a store outage of a few seconds", () => {
  const schema = schemaName("demo_outage");
  const relay = new PostgresRelay(DATABASE_URL);
  let store: DrizzleTaskStore;
  let runner: TaskRunner;
  let release: () => void = () => {};
  const released = new Promise<void>((resolve) => {
    release = resolve;
  });
  const gated: ToolDefinition = {
    name: "gated",
    inputSchema: { type: "object" },
    taskMode: "optional",
    run: async () => {
      await released;
      return { content: [{ type: "text", text: "finished after the outage" }] };
    },
  };

  beforeAll(async () => {
    store = await storeBehindRelay(relay, DATABASE_URL, schema, 4);
  });

  afterAll(async () => {
    release();
    await runner?.drain();
    await store?.close();
    await relay.stop();
    await dropSchema(schema);
  });

  it("ends neither a task subscription nor a blocked tasks/result, and both see the end", async () => {
    // Followers re-read often, so they meet the outage instead of sleeping through it.
    const service = new TaskService({ store, waitRecheckMs: 100 });
    runner = new TaskRunner({ service, onError: () => {}, recheckMs: 100 });
    const extension = new TasksExtension({ service, runner, tools: [gated] });
    const legacy = new LegacyTaskHandlers({ service, runner, tools: [gated] });

    const modern = await extension.callTool(
      { owner: alice, clientCapabilities: WITH_EXT },
      { name: "gated", arguments: {} },
    );
    if (isRpcError(modern)) throw new Error(modern.error.message);
    const modernId = (modern.result as { taskId: string }).taskId;
    const listen = await handleTaskListenRequest(
      new Request("http://127.0.0.1/mcp", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: 7,
          method: "subscriptions/listen",
          params: {
            notifications: { taskIds: [modernId] },
            _meta: {
              [PROTOCOL_VERSION_META_KEY]: MODERN_PROTOCOL_VERSION,
              [CLIENT_CAPABILITIES_META_KEY]: WITH_EXT,
            },
          },
        }),
      }),
      extension,
      alice,
      { keepAliveMs: 0 },
    );
    expect(listen?.status).toBe(200);
    const events = readEvents(listen?.body as ReadableStream<Uint8Array>);

    const old = await legacy.callTool({ owner: alice }, { name: "gated", arguments: {}, task: {} });
    if (isRpcError(old)) throw new Error(old.error.message);
    const oldId = (old.result as { task: { taskId: string } }).task.taskId;
    let settled = false;
    const result = legacy.getTaskResult({ owner: alice }, { taskId: oldId }).finally(() => {
      settled = true;
    });

    // The acknowledgement and the first snapshot.
    await until(() => events.messages.some((m) => m.method === "notifications/tasks"));

    await relay.stop();
    await sleep(3_000);
    await expect(service.get(alice, modernId)).rejects.toMatchObject({
      code: "store_unavailable",
    });
    expect(events.ended).toBe(false);
    expect(settled).toBe(false);

    await relay.start();
    release();

    const answer = await result;
    if (isRpcError(answer)) throw new Error(`tasks/result failed: ${answer.error.message}`);
    expect(answer.result.content).toEqual([{ type: "text", text: "finished after the outage" }]);

    await events.done;
    const tasks = events.messages.filter((m) => m.method === "notifications/tasks");
    const last = tasks.at(-1)?.params as { taskId: string; status: string };
    expect(last).toMatchObject({ taskId: modernId, status: "completed" });
    // The stream ended gracefully, with the listen result, not by being cut.
    expect(events.messages.at(-1)).toMatchObject({ id: 7, result: { resultType: "complete" } });
  }, 60_000);
});
