// Store refusals and outages as clients see them over real HTTP, in both eras: an
// unreachable PostgreSQL is a plain "temporarily unavailable, retry" (-32603,
// data.reason "store_unavailable", data.retryAfterMs) whose detail (driver text, the
// database's address) goes to the server's onError only; a full store names its quota.
import { isTaskError, STORE_RETRY_AFTER_MS, STORE_UNAVAILABLE_MESSAGE } from "@mcp-tasks/core";
import type { DrizzleTaskStore } from "@mcp-tasks/store-drizzle";
import { MemoryTaskStore } from "@mcp-tasks/store-memory";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningServer } from "../src/http-server.js";
import { DATABASE_URL, dropSchema, schemaName } from "./helpers/process.js";
import { PostgresRelay, storeBehindRelay } from "./helpers/relay.js";
import { ALICE, startDualDemo } from "./helpers/server.js";
import { openLegacySession, readResponse, rpc } from "./helpers/wire.js";

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
