// Store refusals and outages as clients see them over real HTTP, in both eras: an
// unreachable PostgreSQL is a plain "temporarily unavailable, retry" (-32603,
// data.reason "store_unavailable", data.retryAfterMs) whose detail (driver text, the
// database's address) goes to the server's onError only; a full store names its quota.

import type { TaskStore } from "@mcp-tasks/core";
import { isTaskError, STORE_RETRY_AFTER_MS, STORE_UNAVAILABLE_MESSAGE } from "@mcp-tasks/core";
import { createPostgresTaskStore, type DrizzleTaskStore } from "@mcp-tasks/store-drizzle";
import { MemoryTaskStore } from "@mcp-tasks/store-memory";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningServer } from "../src/http-server.js";
import { DATABASE_URL, dropSchema, schemaName } from "./helpers/process.js";
import { PostgresRelay, storeBehindRelay } from "./helpers/relay.js";
import { ALICE, startDualDemo } from "./helpers/server.js";
import { openLegacySession, pollTask, readResponse, rpc } from "./helpers/wire.js";

/** A 2025-11-25 request on a session, as raw HTTP; resolves with the answer and its raw text. */
async function legacyCall(
  url: string,
  sessionId: string,
  id: number,
  method: string,
  params: unknown,
) {
  const response = await fetch(url, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      authorization: `Bearer ${ALICE}`,
      "mcp-session-id": sessionId,
      "mcp-protocol-version": "2025-11-25",
    },
    body: JSON.stringify({ jsonrpc: "2.0", id, method, params }),
  });
  return readResponse(response, id);
}

const UNAVAILABLE = {
  code: -32603,
  message: STORE_UNAVAILABLE_MESSAGE,
  data: { reason: "store_unavailable", retryAfterMs: STORE_RETRY_AFTER_MS },
};

describe("while PostgreSQL is unreachable (over HTTP, both eras)", () => {
  const schema = schemaName("demo_store_errors");
  const relay = new PostgresRelay(DATABASE_URL);
  const reported: unknown[] = [];
  let store: DrizzleTaskStore;
  let server: RunningServer;

  beforeAll(async () => {
    store = await storeBehindRelay(relay, DATABASE_URL, schema, 2);
    server = await startDualDemo({ store, onError: (error) => reported.push(error) });
  });

  afterAll(async () => {
    await server?.stop();
    await relay.stop();
    await dropSchema(schema);
  });

  it("answers a plain retry message with a hint, and logs the detail", async () => {
    const sessionId = await openLegacySession(server.url, ALICE, "store-errors");
    await relay.stop();
    const modern = await rpc(server.url, "tasks/get", { taskId: "t-outage" }, { token: ALICE });
    const legacy = await legacyCall(server.url, sessionId, 2, "tasks/get", { taskId: "t-outage" });
    const legacyList = await legacyCall(server.url, sessionId, 3, "tasks/list", {});
    for (const answer of [modern, legacy, legacyList]) {
      expect(answer.body?.error).toEqual(UNAVAILABLE);
      const text = JSON.stringify(answer.body);
      expect(text).not.toMatch(/ECONNREFUSED|ECONNRESET|127\.0\.0\.1|PostgreSQL|postgres:/i);
      expect(text).not.toContain(String(relay.port));
    }
    // The detail is in the log, for the operator.
    const outages = reported.filter((e) => isTaskError(e, "store_unavailable"));
    expect(outages.length).toBeGreaterThanOrEqual(3);
    expect(String((outages[0] as Error).message)).toMatch(/PostgreSQL|ECONN|answer/i);

    // Back again: the same node serves without a restart.
    await relay.start();
    let back: Awaited<ReturnType<typeof rpc>> | undefined;
    for (let i = 0; i < 50; i++) {
      back = await rpc(server.url, "tasks/get", { taskId: "t-outage" }, { token: ALICE });
      if (back.body?.error?.code === -32602) break;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    expect(back?.body?.error?.code).toBe(-32602);
  }, 60_000);
});

describe("a full store over HTTP (2025-11-25)", () => {
  let server: RunningServer;

  beforeAll(async () => {
    server = await startDualDemo({
      store: new MemoryTaskStore({ sweepIntervalMs: 0, maxBytesPerOwner: 2048 }),
    });
  });

  afterAll(async () => {
    await server?.stop();
  });

  it("answers -32603 with data.reason store_full and the quota, as the 2026 era does", async () => {
    const sessionId = await openLegacySession(server.url, ALICE, "store-errors");
    const params = {
      name: "slow_compute",
      arguments: { seconds: 30, label: "x".repeat(1200) },
      task: { ttl: 60_000 },
    };
    const first = await legacyCall(server.url, sessionId, 2, "tools/call", params);
    expect(first.body?.result).toHaveProperty("task");
    const refused = await legacyCall(server.url, sessionId, 3, "tools/call", params);
    expect(refused.body?.error).toMatchObject({
      code: -32603,
      data: { reason: "store_full", quota: "maxBytesPerOwner", limit: 2048 },
    });
    expect(refused.body?.error?.message).toContain("maxBytesPerOwner");
    const modern = await rpc(
      server.url,
      "tools/call",
      { name: "slow_compute", arguments: { seconds: 30, label: "x".repeat(1200) } },
      { token: ALICE },
    );
    expect(modern.body?.error).toMatchObject({
      code: -32603,
      data: { reason: "store_full", quota: "maxBytesPerOwner", limit: 2048 },
    });
  });
});

// One rule for values (core's `assertStorable`): U+0000, which PostgreSQL cannot keep, is
// refused before any store, with the same -32602 and words on memory and on PostgreSQL, in
// both eras. It used to be kept by the memory store and refused by PostgreSQL in its words.
const stores: [string, () => Promise<{ store: TaskStore; drop: () => Promise<void> }>][] = [
  [
    "memory",
    async () => ({ store: new MemoryTaskStore({ sweepIntervalMs: 0 }), drop: async () => {} }),
  ],
  [
    "PostgreSQL",
    async () => {
      const schema = schemaName("demo_nul");
      const store = await createPostgresTaskStore({
        url: DATABASE_URL,
        schema,
        poolSize: 2,
        migrate: true,
      });
      return { store, drop: () => dropSchema(schema) };
    },
  ],
];

for (const [name, open] of stores) {
  describe(`a value holding U+0000 over HTTP (${name}, both eras)`, () => {
    let server: RunningServer;
    let drop: () => Promise<void> = async () => {};

    beforeAll(async () => {
      const opened = await open();
      drop = opened.drop;
      server = await startDualDemo({ store: opened.store });
    });

    afterAll(async () => {
      await server?.stop();
      await drop();
    });

    /** -32602 naming the character and where it is, never a database's words. */
    function expectRefused(error: unknown, where: string): void {
      expect(error).toMatchObject({ code: -32602 });
      const message = String((error as { message?: unknown }).message);
      expect(message).toContain(`U+0000 at ${where}`);
      expect(message).not.toMatch(/database|escape sequence|byte sequence|json/i);
    }

    it("refuses arguments holding it in a task-creating tools/call, in both eras", async () => {
      const args = { seconds: 0, label: "a\u0000b" };
      const modern = await rpc(
        server.url,
        "tools/call",
        { name: "slow_compute", arguments: args },
        { token: ALICE },
      );
      expectRefused(modern.body?.error, "/arguments/label");
      const sessionId = await openLegacySession(server.url, ALICE, "nul");
      const legacy = await legacyCall(server.url, sessionId, 2, "tools/call", {
        name: "slow_compute",
        arguments: args,
        task: { ttl: 60_000 },
      });
      expectRefused(legacy.body?.error, "/arguments/label");
      expect(legacy.body?.error?.message).toBe(modern.body?.error?.message);
    });

    it("refuses an input answer holding it, and the task still waits for a good one", async () => {
      const created = await rpc(
        server.url,
        "tools/call",
        { name: "confirm_delete", arguments: { filename: "a.txt" } },
        { token: ALICE },
      );
      expect(created.body?.result?.resultType).toBe("task");
      const taskId = String(created.body?.result?.taskId);
      await pollTask(server.url, taskId, ALICE, (t) => t.status === "input_required");
      const bad = await rpc(
        server.url,
        "tasks/update",
        {
          taskId,
          inputResponses: {
            confirm: { action: "accept", content: { confirm: true, note: "\u0000" } },
          },
        },
        { token: ALICE },
      );
      expectRefused(bad.body?.error, "/confirm/content/note");
      const good = await rpc(
        server.url,
        "tasks/update",
        { taskId, inputResponses: { confirm: { action: "accept", content: { confirm: true } } } },
        { token: ALICE },
      );
      expect(good.body?.error).toBeUndefined();
      const done = await pollTask(server.url, taskId, ALICE);
      expect(done.status).toBe("completed");
    });
  });
}
