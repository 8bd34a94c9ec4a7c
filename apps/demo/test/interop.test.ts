import { createRawDispatch } from "@mcp-tasks/extension/client";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import {
  createTaskSessionFromClient,
  type TaskEnabledSession,
  TaskFailedError,
} from "@modelcontextprotocol/ext-tasks/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningServer } from "../src/http-server.js";
import { ALICE, BOB, startDemo } from "./helpers/server.js";
import { rpc } from "./helpers/wire.js";

interface Connected {
  client: Client;
  session: TaskEnabledSession;
  inputs: string[];
}

describe("@modelcontextprotocol/ext-tasks client on its 2026-07-28 path", () => {
  let server: RunningServer;
  const open: Connected[] = [];

  beforeAll(async () => {
    server = await startDemo();
  });
  afterAll(async () => {
    for (const c of open) {
      await c.session.close();
      await c.client.close();
    }
    await server.stop();
  });

  async function connect(token: string): Promise<Connected> {
    const clientInfo = { name: "ext-tasks-interop", version: "1.0.0" };
    const client = new Client(clientInfo, {
      capabilities: { elicitation: { form: {} } },
      versionNegotiation: { mode: "auto" },
    });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(server.url), {
        requestInit: { headers: { authorization: `Bearer ${token}` } },
      }),
    );
    const inputs: string[] = [];
    const session = createTaskSessionFromClient(client, {
      endpointId: `demo-${token}`,
      rawDispatch: createRawDispatch({ url: server.url, token }),
      v2RequestFraming: {
        protocolVersion: "2026-07-28",
        clientInfo,
        clientCapabilities: { elicitation: { form: {} } },
      },
      onInputRequest: (async (request: { kind: string }) => {
        inputs.push(request.kind);
        return { action: "accept", content: { confirm: true, name: "Ada" } };
      }) as never,
    });
    const connected = { client, session, inputs };
    open.push(connected);
    return connected;
  }

  it("sees the 2026-07-28 task capabilities", async () => {
    const { client, session } = await connect(ALICE);
    expect(client.getProtocolEra()).toBe("modern");
    expect(session.capabilities).toMatchObject({
      execution: true,
      cancellation: true,
      inputResponses: true,
    });
  });

  it("creates a task, polls it and reads the inlined result", async () => {
    const { session } = await connect(ALICE);
    const execution = await session.callTool("slow_compute", { seconds: 0.2, label: "interop" });
    expect(execution.kind).toBe("task");
    const { outcome } = await execution.settle();
    expect(outcome.status).toBe("completed");
    if (outcome.status !== "completed") return;
    expect(outcome.result).toMatchObject({
      content: [{ type: "text", text: "Computed interop in 0.2s" }],
    });
  });

  it("answers input_required through tasks/update", async () => {
    const { session, inputs } = await connect(ALICE);
    const execution = await session.callTool("confirm_delete", { filename: "notes.txt" });
    const { outcome } = await execution.settle();
    expect(outcome.status).toBe("completed");
    if (outcome.status !== "completed") return;
    expect(outcome.result).toMatchObject({
      content: [{ type: "text", text: "Deleted notes.txt" }],
    });
    expect(inputs).toEqual(["elicitation"]);
  });

  it("answers two pending inputs at once", async () => {
    const { session, inputs } = await connect(ALICE);
    const execution = await session.callTool("multi_input", {});
    const { outcome } = await execution.settle();
    expect(outcome.status).toBe("completed");
    if (outcome.status !== "completed") return;
    expect(JSON.stringify(outcome.result)).toContain("name=Ada, confirmed=true");
    expect(inputs).toEqual(["elicitation", "elicitation"]);
  });

  it("cancels a running task", async () => {
    const { session } = await connect(ALICE);
    const execution = await session.callTool("slow_compute", { seconds: 60, label: "cancel" });
    expect(execution.kind).toBe("task");
    await execution.cancel();
    const { outcome } = await execution.settle();
    expect(outcome.status).toBe("cancelled");
  });

  it("reports a tool error as a completed task with isError", async () => {
    const { session } = await connect(ALICE);
    const execution = await session.callTool("failing_job", {});
    const { outcome } = await execution.settle();
    expect(outcome.status).toBe("completed");
    if (outcome.status !== "completed") return;
    expect(outcome.result).toMatchObject({ isError: true });
  });

  it("reports a protocol error as a failed task carrying the JSON-RPC error", async () => {
    const { session } = await connect(ALICE);
    const execution = await session.callTool("protocol_error_job", {});
    const { outcome } = await execution.settle();
    expect(outcome.status).toBe("failed");
    if (outcome.status !== "failed") return;
    expect(outcome.error).toBeInstanceOf(TaskFailedError);
    expect(outcome.error).toMatchObject({ code: -32603, data: { reason: "worker_crashed" } });
    expect(outcome.error.message).toContain("worker crashed");
  });

  it("serves a synchronous tool without a task", async () => {
    const { session } = await connect(ALICE);
    const execution = await session.callTool("greet", { name: "Ada" });
    expect(execution.kind).toBe("immediate");
    const { outcome } = await execution.settle();
    expect(outcome.status).toBe("completed");
  });

  it("gives a second owner -32602 for the first owner's task on every method", async () => {
    const { session } = await connect(ALICE);
    const execution = await session.callTool("slow_compute", { seconds: 30, label: "private" });
    if (execution.kind !== "task") throw new Error("expected a task");
    const taskId = execution.handle.taskId;
    for (const [method, params] of [
      ["tasks/get", { taskId }],
      ["tasks/update", { taskId, inputResponses: { confirm: { action: "accept", content: {} } } }],
      ["tasks/cancel", { taskId }],
      ["subscriptions/listen", { notifications: { taskIds: [taskId] } }],
    ] as const) {
      const { body } = await rpc(server.url, method, params, { token: BOB });
      expect(body?.error?.code, method).toBe(-32602);
    }
    // Bob's cancel did nothing: the task still runs for Alice.
    const { body } = await rpc(server.url, "tasks/get", { taskId }, { token: ALICE });
    expect(body?.result?.status).toBe("working");
    await execution.cancel();
    expect((await execution.settle()).outcome.status).toBe("cancelled");
  });
});
