// The `server` option: the user's own McpServer keeps its tools in both eras, next to the
// task tools, on one endpoint.
import type { AddressInfo } from "node:net";
import { TaskRunner, TaskService } from "@mcp-tasks/core";
import { MemoryTaskStore } from "@mcp-tasks/store-memory";
import { McpServer } from "@modelcontextprotocol/server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { ownerOfBearer, slowReport } from "../examples/report-tool.js";
import { createTasksEndpoint, createTasksHttpServer } from "../src/index.js";
import { modernClient, sdk1Client, sdk1Report } from "./helpers/clients.js";

const store = new MemoryTaskStore({ sweepIntervalMs: 0 });
const service = new TaskService({ store, pollIntervalMs: 50 });
const tools = [slowReport(50)];
const runner = new TaskRunner({ service, tools });
const endpoint = createTasksEndpoint({
  service,
  runner,
  tools,
  owner: (request) => ownerOfBearer(request.headers.get("authorization")) ?? { kind: "anonymous" },
  // Anonymous callers are let in on purpose (an owner hook alone would refuse them).
  requireOwner: false,
  server: () => {
    const server = new McpServer({ name: "calculator", version: "1.0.0" });
    server.registerTool(
      "add",
      {
        inputSchema: z.object({ a: z.number(), b: z.number() }),
        annotations: { readOnlyHint: true },
      },
      async ({ a, b }) => ({ content: [{ type: "text", text: String(a + b) }] }),
    );
    return server;
  },
});
const server = createTasksHttpServer(endpoint.listener);
let url: string;
const closers: (() => Promise<void>)[] = [];

beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
});
afterAll(async () => {
  for (const close of closers) await close();
  await endpoint.closeSessions();
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  await endpoint.close();
  await runner.shutdown({ drainMs: 0 });
  await store.close();
});

function text(result: unknown): string | undefined {
  const first = (result as { content?: { type: string; text?: string }[] }).content?.[0];
  return first?.type === "text" ? first.text : undefined;
}

describe("an existing McpServer behind the endpoint", () => {
  it("2026-07-28: its own tool answers, its validation error is its own, and the task tool runs", async () => {
    const alice = await modernClient(url, "alice-token");
    closers.push(alice.close);
    const { tools: listed } = await alice.client.listTools();
    expect(listed.map((tool) => tool.name).sort()).toEqual(["add", "slow_report"]);
    expect(listed.find((tool) => tool.name === "add")?.annotations).toEqual({ readOnlyHint: true });
    expect(text(await alice.client.callTool({ name: "add", arguments: { a: 2, b: 3 } }))).toBe("5");
    const bad = await alice.client.callTool({ name: "add", arguments: { a: "x", b: 3 } });
    expect(bad.isError).toBe(true);
    expect(text(bad)).toContain("Input validation error");
    const execution = await alice.session.callTool("slow_report", { topic: "sums" });
    const { outcome } = await execution.settle();
    expect(outcome.status).toBe("completed");
  });

  it("2025-11-25: the same, for an SDK 1.x client", async () => {
    const client = await sdk1Client(url, "alice-token");
    closers.push(() => client.close());
    const { tools: listed } = await client.listTools();
    expect(listed.map((tool) => tool.name).sort()).toEqual(["add", "slow_report"]);
    expect(text(await client.callTool({ name: "add", arguments: { a: 2, b: 3 } }))).toBe("5");
    const bad = await client.callTool({ name: "add", arguments: { a: "x", b: 3 } });
    expect(bad.isError).toBe(true);
    const { types, text: report } = await sdk1Report(client, "sums");
    expect(types[0]).toBe("taskCreated");
    expect(report).toContain("Report on sums");
  });
});
