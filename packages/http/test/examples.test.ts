// Every adapter's example, served on 127.0.0.1, driven by real clients of both eras.
import type { Client as Sdk1Client } from "@modelcontextprotocol/sdk/client/index.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startExpressExample } from "../examples/express.js";
import { startFetchExample } from "../examples/fetch.js";
import { startHonoExample } from "../examples/hono.js";
import { startNodeHttpExample } from "../examples/node-http.js";
import { modernClient, readAnswer, sdk1Client, sdk1Report } from "./helpers/clients.js";

const EXAMPLES = [
  { name: "node:http", start: startNodeHttpExample },
  { name: "Express", start: startExpressExample },
  { name: "Hono", start: startHonoExample },
  { name: "fetch", start: startFetchExample },
];

const INITIALIZE = {
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: {
    protocolVersion: "2025-11-25",
    capabilities: {},
    clientInfo: { name: "raw", version: "1" },
  },
};

describe.each(EXAMPLES)("the $name example", ({ start }) => {
  let server: { url: string; close(): Promise<void> };
  const closers: (() => Promise<void>)[] = [];

  beforeAll(async () => {
    server = await start({ port: 0, workMs: 100 });
  });
  afterAll(async () => {
    for (const close of closers) await close();
    await server.close();
  });

  it("runs slow_report as a task for a 2026-07-28 client (ext-tasks)", async () => {
    const alice = await modernClient(server.url, "alice-token");
    closers.push(alice.close);
    expect(alice.client.getProtocolEra()).toBe("modern");
    const execution = await alice.session.callTool(
      "slow_report",
      { topic: "tides" },
      { task: { preference: "require" } },
    );
    expect(execution.kind).toBe("task");
    const { outcome } = await execution.settle();
    expect(outcome.status).toBe("completed");
    if (outcome.status !== "completed") return;
    expect(JSON.stringify(outcome.result)).toContain("Report on tides");
  });

  it("runs slow_report as a task for an SDK 1.x client (callToolStream, 2025-11-25)", async () => {
    const client: Sdk1Client = await sdk1Client(server.url, "alice-token");
    closers.push(() => client.close());
    const { types, text } = await sdk1Report(client, "winds");
    expect(types[0]).toBe("taskCreated");
    expect(types.at(-1)).toBe("result");
    expect(text).toContain("Report on winds");
  });

  it("keeps one owner's tasks from another, across eras", async () => {
    const alice = await sdk1Client(server.url, "alice-token");
    const bob = await sdk1Client(server.url, "bob-token");
    closers.push(
      () => alice.close(),
      () => bob.close(),
    );
    const stream = alice.experimental.tasks.callToolStream(
      { name: "slow_report", arguments: { topic: "mine" } },
      (await import("@modelcontextprotocol/sdk/types.js")).CallToolResultSchema,
      { task: {} },
    );
    const first = (await stream.next()).value;
    if (first?.type !== "taskCreated") throw new Error("no task");
    const taskId = first.task.taskId;
    for await (const _ of stream) {
      // drain to the result
    }
    await expect(bob.experimental.tasks.getTask(taskId)).rejects.toMatchObject({ code: -32602 });
    // The 2026-07-28 era sees the same store with the same owners.
    const modern = await fetch(server.url, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "mcp-protocol-version": "2026-07-28",
        "mcp-method": "tasks/get",
        "mcp-name": taskId,
        authorization: "Bearer alice-token",
      },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 7,
        method: "tasks/get",
        params: {
          taskId,
          _meta: {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {
              extensions: { "io.modelcontextprotocol/tasks": {} },
            },
          },
        },
      }),
    });
    const answer = await readAnswer(modern, 7);
    expect(answer.body?.result).toMatchObject({ taskId, status: "completed" });
  });

  it("refuses a request without a valid token with 401, in both eras", async () => {
    for (const headers of [
      { "mcp-protocol-version": "2026-07-28", "mcp-method": "server/discover" },
      {},
    ]) {
      const response = await fetch(server.url, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          authorization: "Bearer wrong-token",
          ...headers,
        },
        body: JSON.stringify(INITIALIZE),
      });
      await response.text();
      expect(response.status).toBe(401);
      expect(response.headers.get("www-authenticate")).toMatch(/^Bearer/);
    }
  });
});
