// Per-owner limits answer the same on node:http and on fetch, in both eras: in band
// (-32603, data.reason, data.retryAfterMs, Retry-After) for a request with an id, 429 with
// Retry-After otherwise; a held slot comes back when its stream or session ends; another
// owner is served meanwhile. Also the require-owner default of an owner hook.
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { owner, TaskRunner, TaskService, type ToolDefinition } from "@mcp-tasks/core";
import { MemoryTaskStore } from "@mcp-tasks/store-memory";
import { toNodeHandler } from "@modelcontextprotocol/node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTasksEndpoint, createTasksHttpServer, type TasksEndpoint } from "../src/index.js";

const store = new MemoryTaskStore({ sweepIntervalMs: 0 });
const service = new TaskService({ store, pollIntervalMs: 50, requireOwner: true });
/** `hold`: runs until cancelled (at most 10 s), so a listen on it stays open. */
const hold: ToolDefinition = {
  name: "hold",
  inputSchema: { type: "object" },
  taskMode: "always",
  async run(_args, ctx) {
    await new Promise((resolve) => {
      const timer = setTimeout(resolve, 10_000);
      ctx.signal.addEventListener("abort", () => resolve(clearTimeout(timer)), { once: true });
    });
    return { content: [{ type: "text", text: "held" }] };
  },
};
const runner = new TaskRunner({ service, tools: [hold] });
const servers: Server[] = [];
const errors: unknown[] = [];
let endpoint: TasksEndpoint;
const urls: Record<"node" | "fetch", string> = { node: "", fetch: "" };
const ALICE = owner({ principalId: "alice" });

async function serve(server: Server): Promise<string> {
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
}

beforeAll(async () => {
  endpoint = createTasksEndpoint({
    service,
    runner,
    tools: [hold],
    keepAliveMs: 100,
    // An owner hook and no requireOwner: anonymous callers are refused by default.
    owner: (request) => {
      const auth = request.headers.get("authorization");
      if (auth === null) return { kind: "anonymous" };
      return owner({ principalId: auth.replace(/^Bearer /, "") });
    },
    limits: { maxSessionsPerOwner: 2, maxListenStreamsPerOwner: 1, maxResultWaitsPerOwner: 1 },
    onError: (error) => errors.push(error),
  });
  urls.node = await serve(createTasksHttpServer(endpoint.listener));
  const node = toNodeHandler({ fetch: (request) => endpoint.fetch(request) });
  urls.fetch = await serve(
    createTasksHttpServer((req, res) => void node(req as Parameters<typeof node>[0], res)),
  );
});

afterAll(async () => {
  await endpoint.close();
  for (const server of servers) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
  await runner.shutdown({ drainMs: 0 });
  await store.close();
});

const headers = (who: string | undefined, extra: Record<string, string> = {}) => ({
  "content-type": "application/json",
  accept: "application/json, text/event-stream",
  ...(who !== undefined && { authorization: `Bearer ${who}` }),
  ...extra,
});

function initialize(url: string, who: string | undefined): Promise<Response> {
  return fetch(url, {
    method: "POST",
    headers: headers(who),
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 7,
      method: "initialize",
      params: {
        protocolVersion: "2025-11-25",
        capabilities: {},
        clientInfo: { name: "t", version: "1" },
      },
    }),
  });
}

function listen(url: string, who: string, taskId: string, signal: AbortSignal): Promise<Response> {
  return fetch(url, {
    method: "POST",
    headers: headers(who, {
      "mcp-protocol-version": "2026-07-28",
      "mcp-method": "subscriptions/listen",
    }),
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 9,
      method: "subscriptions/listen",
      params: {
        notifications: { taskIds: [taskId] },
        _meta: {
          "io.modelcontextprotocol/protocolVersion": "2026-07-28",
          "io.modelcontextprotocol/clientCapabilities": {
            extensions: { "io.modelcontextprotocol/tasks": {} },
          },
        },
      },
    }),
    signal,
  });
}

async function expectInBand(response: Response, reason: string, id: number): Promise<void> {
  expect(response.status).toBe(200);
  expect(Number(response.headers.get("retry-after"))).toBeGreaterThan(0);
  const body = (await response.json()) as {
    id: unknown;
    error: { code: number; data: { reason: string; retryAfterMs: number } };
  };
  expect(body.id).toBe(id);
  expect(body.error.code).toBe(-32603);
  expect(body.error.data.reason).toBe(reason);
  expect(body.error.data.retryAfterMs).toBeGreaterThan(0);
}

describe.each(["node", "fetch"] as const)("per-owner limits (%s front)", (front) => {
  it("refuses anonymous callers when an owner hook is configured, and says so once", async () => {
    expect((await initialize(urls[front], undefined)).status).toBe(401);
    expect(errors).toHaveLength(0); // the service requires owners too: no mismatch reported
  });

  it("2025-11-25: sessions per owner, in band; the slot returns when a session ends", async () => {
    const who = `alice-${front}`;
    const opened = await Promise.all([1, 2, 3, 4].map(() => initialize(urls[front], who)));
    const ids = opened.map((r) => r.headers.get("mcp-session-id"));
    expect(ids.filter((id) => id !== null)).toHaveLength(2);
    for (const response of opened.filter((r) => r.headers.get("mcp-session-id") === null)) {
      await expectInBand(response, "too_many_sessions", 7);
    }
    await Promise.all(opened.map((r) => r.body?.cancel().catch(() => {})));
    const bob = await initialize(urls[front], `bob-${front}`);
    expect(bob.headers.get("mcp-session-id")).not.toBeNull();
    await bob.body?.cancel();
    const sessionId = ids.find((id) => id !== null) as string;
    const ended = await fetch(urls[front], {
      method: "DELETE",
      headers: headers(who, { "mcp-session-id": sessionId }),
    });
    expect(ended.status).toBe(200);
    const again = await initialize(urls[front], who);
    expect(again.headers.get("mcp-session-id")).not.toBeNull();
    await again.body?.cancel();
  });

  it("2026-07-28: listen streams per owner, in band; the slot returns when the stream ends", async () => {
    const who = `carol-${front}`;
    const task = await service.create(owner({ principalId: who }), {
      era: "2026-07-28",
      request: { toolName: "hold", arguments: {} },
    });
    const first = new AbortController();
    const open = await listen(urls[front], who, task.taskId, first.signal);
    expect(open.headers.get("content-type")).toContain("text/event-stream");
    await expectInBand(
      await listen(urls[front], who, task.taskId, AbortSignal.timeout(5_000)),
      "too_many_streams",
      9,
    );
    first.abort();
    let status = "";
    for (let i = 0; i < 50 && !status.includes("event-stream"); i++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      const controller = new AbortController();
      const retry = await listen(urls[front], who, task.taskId, controller.signal);
      status = retry.headers.get("content-type") ?? "";
      controller.abort();
    }
    expect(status).toContain("text/event-stream");
    await service.requestCancel(owner({ principalId: who }), task.taskId);
  });
});

describe("a request rate", () => {
  it("answers a request without an id 429 with Retry-After, and one with an id in band", async () => {
    const limited = createTasksEndpoint({
      service,
      runner,
      tools: [hold],
      owner: () => ALICE,
      limits: { requestsPerSecond: 1, requestBurst: 1 },
    });
    const node = toNodeHandler({ fetch: (request) => limited.fetch(request) });
    const url = await serve(
      createTasksHttpServer((req, res) => void node(req as Parameters<typeof node>[0], res)),
    );
    const first = await initialize(url, "x");
    expect(first.headers.get("mcp-session-id")).not.toBeNull();
    await first.body?.cancel();
    await expectInBand(await initialize(url, "x"), "rate_limited", 7);
    const get = await fetch(url, { headers: headers("x") });
    expect(get.status).toBe(429);
    expect(Number(get.headers.get("retry-after"))).toBeGreaterThan(0);
    await limited.close();
  });
});
