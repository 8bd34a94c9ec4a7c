import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningServer } from "../src/http-server.js";
import { ALICE, BOB, startDemo } from "./helpers/server.js";
import { EXT, legacyInitialize, pollTask, readResponse, rpc } from "./helpers/wire.js";

describe("demo endpoint over HTTP", () => {
  let server: RunningServer;
  let strict: RunningServer;

  beforeAll(async () => {
    server = await startDemo();
    strict = await startDemo({ requireAuth: true });
  });
  afterAll(async () => {
    await server.stop();
    await strict.stop();
  });

  it("advertises exactly the extension in server/discover, never capabilities.tasks", async () => {
    const { body } = await rpc(server.url, "server/discover");
    const capabilities = body?.result?.capabilities as Record<string, unknown>;
    expect(capabilities.extensions).toEqual({ [EXT]: {} });
    expect(capabilities).not.toHaveProperty("tasks");
  });

  it("answers -32601 for tasks/result and tasks/list", async () => {
    for (const method of ["tasks/result", "tasks/list"]) {
      const { body } = await rpc(
        server.url,
        method,
        method === "tasks/list" ? {} : { taskId: "x" },
      );
      expect(body?.error?.code, method).toBe(-32601);
    }
  });

  it("answers -32020 when Mcp-Name does not match params.taskId", async () => {
    const created = await rpc(
      server.url,
      "tools/call",
      { name: "slow_compute", arguments: { seconds: 0 } },
      { token: ALICE },
    );
    const taskId = created.body?.result?.taskId as string;
    const { status, body } = await rpc(
      server.url,
      "tasks/get",
      { taskId },
      { token: ALICE, headers: { "mcp-name": "other" } },
    );
    expect(status).toBe(400);
    expect(body?.error?.code).toBe(-32020);
  });

  it("streams notifications/tasks on subscriptions/listen after authorizing each id", async () => {
    const created = await rpc(
      server.url,
      "tools/call",
      { name: "generate_report", arguments: { topic: "tides", sections: 2 } },
      { token: ALICE },
    );
    const taskId = created.body?.result?.taskId as string;
    expect(taskId).toBeTruthy();
    const denied = await rpc(
      server.url,
      "subscriptions/listen",
      { notifications: { taskIds: [taskId] } },
      { token: BOB },
    );
    expect(denied.body?.error?.code).toBe(-32602);
    const undeclared = await rpc(
      server.url,
      "subscriptions/listen",
      { notifications: { taskIds: [taskId] } },
      { token: ALICE, capabilities: {} },
    );
    expect(undeclared.body?.error?.code).toBe(-32021);
    const stream = await rpc(
      server.url,
      "subscriptions/listen",
      { notifications: { taskIds: [taskId] } },
      { token: ALICE },
    );
    const events = stream.events as Array<{ method?: string; params?: Record<string, unknown> }>;
    expect(events[0]).toMatchObject({
      method: "notifications/subscriptions/acknowledged",
      params: { notifications: { taskIds: [taskId] } },
    });
    const notes = events.filter((e) => e.method === "notifications/tasks");
    expect(notes.length).toBeGreaterThan(0);
    for (const note of notes) {
      expect(note.params).toMatchObject({
        taskId,
        _meta: { "io.modelcontextprotocol/subscriptionId": stream.body?.id },
      });
    }
    expect(notes.at(-1)?.params).toMatchObject({
      status: "completed",
      result: { resultType: "complete" },
    });
    expect(stream.body?.result).toEqual({ resultType: "complete" });
  });

  it("reports generate_report progress in statusMessage and honours cancellation", async () => {
    const created = await rpc(
      server.url,
      "tools/call",
      { name: "generate_report", arguments: { topic: "x", sections: 20 } },
      { token: ALICE },
    );
    const taskId = created.body?.result?.taskId as string;
    const running = await pollTask(server.url, taskId, ALICE, (t) =>
      String(t.statusMessage ?? "").startsWith("Writing section 2"),
    );
    expect(running.status).toBe("working");
    await rpc(server.url, "tasks/cancel", { taskId }, { token: ALICE });
    expect((await pollTask(server.url, taskId, ALICE)).status).toBe("cancelled");
  });

  it("turns bad input into JSON-RPC errors or HTTP statuses, never a 500", async () => {
    const post = (body: string, headers: Record<string, string> = {}) =>
      fetch(server.url, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          ...headers,
        },
        body,
      });
    const malformed = await readResponse(await post("{not json"));
    expect(malformed.status).toBe(400);
    expect(malformed.body?.error?.code).toBe(-32700);
    const huge = await post(
      JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping", pad: "x".repeat(2 * 1024 * 1024) }),
    );
    expect(huge.status).toBe(413);
    await huge.body?.cancel();
    const wrongType = await fetch(server.url, {
      method: "POST",
      headers: { "content-type": "text/plain" },
      body: "hi",
    });
    expect(wrongType.status).toBe(415);
    const unknown = await rpc(server.url, "no/such/method", {});
    expect(unknown.body?.error?.code).toBe(-32601);
    const wrongArgs = await rpc(server.url, "tools/call", {
      name: "greet",
      arguments: { name: 42 },
    });
    expect(wrongArgs.body?.error?.code).toBe(-32602);
    const legacy = await readResponse(await post(JSON.stringify(legacyInitialize("x"))));
    expect(legacy.status).toBe(400);
    expect(legacy.body?.error?.message).toContain("2025-11-25");
    const badToken = await rpc(server.url, "server/discover", {}, { token: "nope" });
    expect(badToken.status).toBe(401);
    expect(badToken.headers.get("www-authenticate")).toContain("Bearer");
    const notFound = await fetch(server.url.replace("/mcp", "/other"));
    expect(notFound.status).toBe(404);
    await notFound.body?.cancel();
  });

  it("answers anonymous callers 401 under --require-auth and serves token holders", async () => {
    expect((await rpc(strict.url, "server/discover")).status).toBe(401);
    const ok = await rpc(
      strict.url,
      "tools/call",
      { name: "greet", arguments: { name: "Ada" } },
      { token: ALICE },
    );
    expect(ok.body?.result).toMatchObject({ content: [{ text: "Hello, Ada!" }] });
  });
});
