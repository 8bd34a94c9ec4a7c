import { Client as Sdk1Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport as Sdk1Transport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { CallToolResultSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { connectLegacy, type LegacyConnected } from "./helpers/legacy-client.js";
import { ALICE, ALICE_OWNER, BOB, BOB_OWNER, startDemo, startDualDemo } from "./helpers/server.js";
import { legacyInitialize, readResponse } from "./helpers/wire.js";

const INITIALIZE = legacyInitialize("raw");

function post(url: string, body: string, headers: Record<string, string> = {}) {
  return fetch(url, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      authorization: `Bearer ${ALICE}`,
      ...headers,
    },
    body,
  });
}

describe("the 2025-11-25 era on the demo endpoint", () => {
  let server: Awaited<ReturnType<typeof startDualDemo>>;
  const open: LegacyConnected[] = [];

  beforeAll(async () => {
    server = await startDualDemo();
  });
  afterAll(async () => {
    for (const c of open) await c.close();
    await server.stop();
  });

  async function connect(token: string, name?: string) {
    const connected = await connectLegacy(server.url, token, name);
    open.push(connected);
    return connected;
  }

  it("serves both eras and says so", () => {
    expect(server.app.eras).toEqual(["2026-07-28", "2025-11-25"]);
  });

  it("ext-tasks (2025-11-25 path) negotiates tasks and completes a task", async () => {
    const { client, session } = await connect(ALICE);
    expect(client.getProtocolEra()).toBe("legacy");
    expect(client.getServerCapabilities()?.tasks).toMatchObject({
      list: {},
      cancel: {},
      requests: { tools: { call: {} } },
    });
    expect(session.capabilities).toMatchObject({ execution: true, cancellation: true });
    const execution = await session.callTool(
      "slow_compute",
      { seconds: 0.2, label: "legacy" },
      { task: { preference: "require" } },
    );
    expect(execution.kind).toBe("task");
    const { outcome } = await execution.settle();
    expect(outcome.status).toBe("completed");
    if (outcome.status !== "completed") return;
    expect(outcome.result).toMatchObject({
      content: [{ type: "text", text: "Computed legacy in 0.2s" }],
    });
  });

  it("ext-tasks (2025-11-25 path) answers an elicitation pushed for the task", async () => {
    const { session, inputs } = await connect(ALICE);
    const execution = await session.callTool(
      "confirm_delete",
      { filename: "old.txt" },
      { task: { preference: "require" } },
    );
    const { outcome } = await execution.settle();
    expect(outcome.status).toBe("completed");
    if (outcome.status !== "completed") return;
    expect(outcome.result).toMatchObject({ content: [{ type: "text", text: "Deleted old.txt" }] });
    expect(inputs).toEqual(["elicitation"]);
  });

  it("ext-tasks (2025-11-25 path) cancels a running generate_report", async () => {
    const { session } = await connect(ALICE);
    const execution = await session.callTool(
      "generate_report",
      { topic: "legacy", sections: 20 },
      { task: { preference: "require" } },
    );
    expect(execution.kind).toBe("task");
    await execution.cancel();
    const { outcome } = await execution.settle();
    expect(outcome.status).toBe("cancelled");
  });

  it("makes every store call as the hook's owner: the task is Alice's, Bob cannot see it", async () => {
    const alice = await connect(ALICE);
    const bob = await connect(BOB);
    const execution = await alice.session.callTool(
      "slow_compute",
      { seconds: 30, label: "private" },
      { task: { preference: "require" } },
    );
    if (execution.kind !== "task") throw new Error("expected a task");
    const taskId = execution.handle.taskId;
    // In the shared store, under the owner the token resolved to.
    const stored = await server.app.service.get(ALICE_OWNER, taskId);
    expect(stored.era).toBe("2025-11-25");
    await expect(server.app.service.get(BOB_OWNER, taskId)).rejects.toMatchObject({
      code: "not_found_or_unauthorized",
    });
    await expect(
      bob.client.request({ method: "tasks/get", params: { taskId } }, z.looseObject({})),
    ).rejects.toMatchObject({ code: -32602 });
    expect((await bob.session.listTasks()).tasks.map((t) => t.taskId)).not.toContain(taskId);
    await execution.cancel();
    expect((await execution.settle()).outcome.status).toBe("cancelled");
  });

  it("keeps a session bound to the owner that initialized it", async () => {
    const init = await post(server.url, JSON.stringify(INITIALIZE));
    const sessionId = init.headers.get("mcp-session-id");
    await init.body?.cancel();
    expect(sessionId).toBeTruthy();
    const stolen = await post(
      server.url,
      JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/list", params: {} }),
      {
        authorization: `Bearer ${BOB}`,
        "mcp-session-id": sessionId as string,
        "mcp-protocol-version": "2025-11-25",
      },
    );
    expect(stolen.status).toBe(404);
    await stolen.body?.cancel();
  });

  it("the SDK 1.x client completes a task on the tasks/result path", async () => {
    const client = new Sdk1Client({ name: "sdk1-client", version: "1.0.0" }, { capabilities: {} });
    await client.connect(
      new Sdk1Transport(new URL(server.url), {
        requestInit: { headers: { authorization: `Bearer ${ALICE}` } },
      }),
    );
    try {
      const messages = [];
      for await (const message of client.experimental.tasks.callToolStream(
        { name: "slow_compute", arguments: { seconds: 0.1, label: "sdk1" } },
        CallToolResultSchema,
        { task: { ttl: 60_000 } },
      )) {
        messages.push(message);
      }
      expect(messages[0]?.type).toBe("taskCreated");
      const last = messages.at(-1);
      if (last?.type !== "result") throw new Error(`no result: ${JSON.stringify(last)}`);
      expect(last.result.content).toEqual([{ type: "text", text: "Computed sdk1 in 0.1s" }]);
    } finally {
      await client.close();
    }
  });

  it("turns bad legacy input into JSON-RPC errors or 4xx statuses, never a 500", async () => {
    const malformed = await readResponse(await post(server.url, "{not json"));
    expect(malformed.status).toBe(400);
    expect(malformed.body?.error?.code).toBe(-32700);

    const noSession = await readResponse(
      await post(
        server.url,
        JSON.stringify({ jsonrpc: "2.0", id: 3, method: "tools/list", params: {} }),
      ),
    );
    expect(noSession.status).toBe(400);
    expect(noSession.body?.error?.code).toBeTypeOf("number");

    const unknownSession = await readResponse(
      await post(
        server.url,
        JSON.stringify({ jsonrpc: "2.0", id: 4, method: "tools/list", params: {} }),
        { "mcp-session-id": "no-such-session", "mcp-protocol-version": "2025-11-25" },
      ),
    );
    expect(unknownSession.status).toBe(404);

    const notRpc = await readResponse(await post(server.url, JSON.stringify({ hello: 1 })));
    expect(notRpc.status).toBeGreaterThanOrEqual(400);
    expect(notRpc.status).toBeLessThan(500);
    expect(notRpc.body?.error?.code).toBeTypeOf("number");

    const init = await post(server.url, JSON.stringify(INITIALIZE));
    const sessionId = init.headers.get("mcp-session-id") as string;
    await init.body?.cancel();
    const session = { "mcp-session-id": sessionId, "mcp-protocol-version": "2025-11-25" };
    const badArgs = await readResponse(
      await post(
        server.url,
        JSON.stringify({
          jsonrpc: "2.0",
          id: 5,
          method: "tasks/get",
          params: { taskId: 42 },
        }),
        session,
      ),
      5,
    );
    expect(badArgs.status).toBe(200);
    expect(badArgs.body?.error?.code).toBe(-32602);
    const unknownTool = await readResponse(
      await post(
        server.url,
        JSON.stringify({
          jsonrpc: "2.0",
          id: 6,
          method: "tools/call",
          params: { name: "no_such_tool", arguments: {} },
        }),
        session,
      ),
      6,
    );
    expect(unknownTool.body?.error?.code ?? unknownTool.body?.result?.isError).toBeTruthy();
    for (const answer of [malformed, noSession, unknownSession, notRpc, badArgs, unknownTool]) {
      expect(JSON.stringify(answer.body ?? "")).not.toMatch(/\n\s+at |node_modules/);
    }
  });
});

describe("--legacy off", () => {
  it("answers 2025-11-25 requests with a clear error naming the served revision", async () => {
    const server = await startDemo({ legacy: "off" });
    try {
      expect(server.app.eras).toEqual(["2026-07-28"]);
      const answer = await readResponse(await post(server.url, JSON.stringify(INITIALIZE)));
      expect(answer.status).toBe(400);
      expect(answer.body?.error?.code).toBe(-32022);
      expect(answer.body?.error?.message).toContain("--legacy off");
      expect(answer.body?.error?.data).toEqual({ supported: ["2026-07-28"] });
    } finally {
      await server.stop();
    }
  });
});
