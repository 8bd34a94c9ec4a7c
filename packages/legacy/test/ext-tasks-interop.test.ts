import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import {
  createTaskSessionFromClient,
  type ResolvedInputExchangeContext,
  type TaskEnabledSession,
  TaskFailedError,
} from "@modelcontextprotocol/ext-tasks/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import {
  Gate,
  memoryStore,
  type RunningServer,
  type StoreFixture,
  stack,
  startServer,
} from "./fixtures.js";
import { postgresStore } from "./stores.js";

interface Connected {
  client: Client;
  session: TaskEnabledSession;
  inputs: { kind: string; context: ResolvedInputExchangeContext }[];
}

describe.each([memoryStore, postgresStore])(
  "@modelcontextprotocol/ext-tasks client on its 2025-11-25 path on the $name store",
  (factory) => {
    let fixture: StoreFixture;
    let server: RunningServer;
    const open: Connected[] = [];

    beforeAll(async () => {
      fixture = await factory.create();
      server = await startServer(stack(fixture.store));
    });
    afterAll(async () => {
      for (const c of open) {
        await c.session.close();
        await c.client.close();
      }
      await server.close();
      await fixture.close();
    });

    async function connect(who: string): Promise<Connected> {
      const client = new Client(
        { name: `ext-tasks-${who}`, version: "1.0.0" },
        { capabilities: { elicitation: { form: {} }, sampling: {} } },
      );
      await client.connect(
        new StreamableHTTPClientTransport(server.url, {
          requestInit: { headers: { "x-owner": who } },
        }),
      );
      const inputs: Connected["inputs"] = [];
      const session = createTaskSessionFromClient(client, {
        endpointId: `legacy-${who}`,
        onInputRequest: (async (
          request: { kind: string },
          context: ResolvedInputExchangeContext,
        ) => {
          inputs.push({ kind: request.kind, context });
          if (request.kind === "elicitation") return { action: "accept", content: { ok: true } };
          if (request.kind === "sampling") {
            return {
              model: "test-model",
              role: "assistant",
              content: { type: "text", text: "short" },
            };
          }
          return { roots: [] };
        }) as never,
      });
      const connected = { client, session, inputs };
      open.push(connected);
      return connected;
    }

    it("negotiates the 2025-11-25 task capabilities", async () => {
      const { session } = await connect("alice");
      expect(session.capabilities).toMatchObject({ execution: true, cancellation: true });
    });

    it("creates, polls and reads the result of a task", async () => {
      const { session } = await connect("alice");
      const execution = await session.callTool(
        "slow_echo",
        { text: "hello", ms: 30 },
        { task: { preference: "require" } },
      );
      const { outcome } = await execution.settle();
      expect(outcome.status).toBe("completed");
      if (outcome.status !== "completed") return;
      expect(outcome.result).toMatchObject({ content: [{ type: "text", text: "echo: hello" }] });
    });

    it("cancels a running task", async () => {
      const { session } = await connect("alice");
      server.stack.gates.set("ext-cancel", new Gate());
      const execution = await session.callTool(
        "slow_echo",
        { gate: "ext-cancel" },
        { task: { preference: "require" } },
      );
      await execution.cancel();
      const { outcome } = await execution.settle();
      expect(outcome.status).toBe("cancelled");
    });

    it("round-trips an input_required elicitation pushed on the session stream", async () => {
      const { session, inputs } = await connect("alice");
      const execution = await session.callTool("confirm", { question: "Ship it?" });
      const { outcome } = await execution.settle();
      expect(outcome.status).toBe("completed");
      if (outcome.status !== "completed") return;
      expect(outcome.result).toMatchObject({
        content: [{ type: "text", text: 'answer: {"action":"accept","content":{"ok":true}}' }],
      });
      expect(inputs).toHaveLength(1);
      expect(inputs[0]?.kind).toBe("elicitation");
      expect(inputs[0]?.context).toMatchObject({ scope: "task", delivery: "peer-request" });
    });

    it("round-trips a sampling request", async () => {
      const { session, inputs } = await connect("alice");
      const execution = await session.callTool("summarize", {});
      const { outcome } = await execution.settle();
      expect(outcome.status).toBe("completed");
      if (outcome.status !== "completed") return;
      expect(JSON.stringify(outcome.result)).toContain("test-model");
      expect(inputs.map((i) => i.kind)).toEqual(["sampling"]);
    });

    it("answers a preflight elicitation before the task exists", async () => {
      const { session, inputs } = await connect("alice");
      const execution = await session.callTool("greet_later", {});
      const { outcome } = await execution.settle();
      expect(outcome.status).toBe("completed");
      if (outcome.status !== "completed") return;
      expect(outcome.result).toMatchObject({ content: [{ type: "text", text: "Hello, friend!" }] });
      expect(inputs.map((i) => i.context.scope)).toEqual(["request"]);
    });

    it("reports a tool error as a failed task", async () => {
      const { session } = await connect("alice");
      const execution = await session.callTool("failing_job", {});
      const { outcome } = await execution.settle();
      expect(outcome.status).toBe("failed");
      if (outcome.status !== "failed") return;
      expect(outcome.error).toBeInstanceOf(TaskFailedError);
      expect(outcome.error.message).toContain("the job failed");
    });

    it("keeps a second owner from seeing, listing, reading or cancelling the task", async () => {
      const a = await connect("alice");
      const b = await connect("bob");
      server.stack.gates.set("ext-private", new Gate());
      const execution = await a.session.callTool(
        "slow_echo",
        { gate: "ext-private" },
        { task: { preference: "require" } },
      );
      if (execution.kind !== "task") throw new Error("expected a task");
      const taskId = execution.handle.taskId;
      const listed = await b.session.listTasks();
      expect(listed.tasks.map((t) => t.taskId)).not.toContain(taskId);
      await expect(b.session.cancelTask(taskId as never)).rejects.toMatchObject({ code: -32602 });
      await expect(
        b.client.request({ method: "tasks/get", params: { taskId } }, z.looseObject({})),
      ).rejects.toMatchObject({ code: -32602 });
      await expect(
        b.client.request({ method: "tasks/result", params: { taskId } }, z.looseObject({})),
      ).rejects.toMatchObject({ code: -32602 });
      expect((await a.session.listTasks()).tasks.map((t) => t.taskId)).toContain(taskId);
      server.stack.gates.get("ext-private")?.open();
      const { outcome } = await execution.settle();
      expect(outcome.status).toBe("completed");
    });
  },
);
