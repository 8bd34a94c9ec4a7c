import { randomUUID } from "node:crypto";
import { createServer, type Server as HttpServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { owner, TaskService } from "@mcp-tasks/core";
import { WORKER_LOST_ERROR } from "@mcp-tasks/core/store";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { AuthInfo } from "@modelcontextprotocol/sdk/server/auth/types.js";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import {
  CallToolResultSchema,
  CreateTaskResultSchema,
  ElicitRequestSchema,
  ElicitResultSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { UNSEEN_AUTH_WARNING } from "../src/sdk-task-store/options.js";
import { SdkTaskStore, sdkTaskOptions, withTaskAuth } from "../src/sdk-task-store.js";
import { Gate, memoryStore, type StoreFactory, type StoreFixture } from "./fixtures.js";
import { postgresStore } from "./stores.js";

/**
 * An unmodified-handler `@modelcontextprotocol/sdk` 1.x server: the only change from the
 * SDK's own examples is `...sdkTaskOptions({ service })` (one per process) in the server
 * options (and, for owners from auth info, `withTaskAuth` around the transport call).
 */
function buildServer(
  tasks: ReturnType<typeof sdkTaskOptions>,
  gates: Map<string, Gate>,
): McpServer {
  const server = new McpServer(
    { name: "sdk1-durable", version: "1.0.0" },
    {
      capabilities: { tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } } },
      ...tasks,
    },
  );
  server.experimental.tasks.registerToolTask(
    "slow_echo",
    { inputSchema: { text: z.string(), gate: z.string() }, execution: { taskSupport: "required" } },
    {
      async createTask({ text, gate }, extra) {
        const task = await extra.taskStore.createTask({ ttl: extra.taskRequestedTtl ?? null });
        void (async () => {
          await gates.get(gate)?.opened;
          await extra.taskStore.storeTaskResult(task.taskId, "completed", {
            content: [{ type: "text", text: `echo: ${text}` }],
          });
        })();
        return { task };
      },
      getTask: (_args, extra) => extra.taskStore.getTask(extra.taskId),
      getTaskResult: (_args, extra) =>
        extra.taskStore.getTaskResult(extra.taskId) as Promise<never>,
    },
  );
  server.experimental.tasks.registerToolTask(
    "confirm",
    { inputSchema: { question: z.string() }, execution: { taskSupport: "required" } },
    {
      async createTask({ question }, extra) {
        const task = await extra.taskStore.createTask({});
        void (async () => {
          const answer = await extra.sendRequest(
            {
              method: "elicitation/create",
              params: {
                mode: "form",
                message: question,
                requestedSchema: { type: "object", properties: { ok: { type: "boolean" } } },
              },
            },
            ElicitResultSchema,
            // Typed out of `createTask`'s options, but honoured: queue it for this task.
            { relatedTask: { taskId: task.taskId } } as never,
          );
          await extra.taskStore.updateTaskStatus(task.taskId, "working");
          await extra.taskStore.storeTaskResult(task.taskId, "completed", {
            content: [{ type: "text", text: `answer: ${answer.action}` }],
          });
        })();
        return { task };
      },
      getTask: (_args, extra) => extra.taskStore.getTask(extra.taskId),
      getTaskResult: (_args, extra) =>
        extra.taskStore.getTaskResult(extra.taskId) as Promise<never>,
    },
  );
  return server;
}

async function readBody(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return chunks.length === 0 ? undefined : JSON.parse(Buffer.concat(chunks).toString("utf8"));
}

const factories: StoreFactory[] = [memoryStore, postgresStore];

describe.each(factories)("SdkTaskStore under an SDK 1.x server on the $name store", (factory) => {
  let fixture: StoreFixture;
  let service: TaskService;
  let tasks: ReturnType<typeof sdkTaskOptions>;
  let http: HttpServer;
  let url: URL;
  const gates = new Map<string, Gate>();
  const transports = new Map<string, StreamableHTTPServerTransport>();
  const clients: Client[] = [];

  beforeAll(async () => {
    fixture = await factory.create();
    service = new TaskService({ store: fixture.store, pollIntervalMs: 20 });
    tasks = sdkTaskOptions({ service });
    http = createServer(async (req, res) => {
      const body = req.method === "POST" ? await readBody(req) : undefined;
      const who = req.headers["x-owner"];
      const auth: AuthInfo | undefined =
        typeof who === "string" ? { token: who, clientId: who, scopes: [] } : undefined;
      const sessionId = req.headers["mcp-session-id"];
      let transport = typeof sessionId === "string" ? transports.get(sessionId) : undefined;
      if (transport === undefined) {
        transport = new StreamableHTTPServerTransport({
          sessionIdGenerator: () => randomUUID(),
          onsessioninitialized: (id) => {
            transports.set(id, transport as StreamableHTTPServerTransport);
          },
        });
        await buildServer(tasks, gates).connect(transport);
      }
      const t = transport;
      await withTaskAuth(auth, () =>
        t.handleRequest(auth ? Object.assign(req, { auth }) : req, res, body),
      );
    });
    await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
    url = new URL(`http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`);
  });
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close()));
    await Promise.all([...transports.values()].map((t) => t.close()));
    tasks.taskStore.close();
    http.closeAllConnections();
    await new Promise<void>((resolve) => http.close(() => resolve()));
    await fixture.close();
  });

  async function connect(who?: string) {
    const client = new Client(
      { name: "sdk1-client", version: "1.0.0" },
      { capabilities: { elicitation: { form: {} } } },
    );
    await client.connect(
      new StreamableHTTPClientTransport(url, {
        requestInit: { headers: who === undefined ? {} : { "x-owner": who } },
      }),
    );
    clients.push(client);
    return client;
  }

  it("creates, polls and reads a durable task", async () => {
    const c = await connect("alice");
    gates.set("a", new Gate());
    gates.get("a")?.open();
    const messages = [];
    for await (const message of c.experimental.tasks.callToolStream(
      { name: "slow_echo", arguments: { text: "hi", gate: "a" } },
      CallToolResultSchema,
      { task: { ttl: 30_000 } },
    )) {
      messages.push(message);
    }
    const created = messages[0];
    if (created?.type !== "taskCreated") throw new Error("no task");
    expect(created.task.ttl).toBe(30_000);
    const last = messages.at(-1);
    if (last?.type !== "result") throw new Error(`no result: ${JSON.stringify(last)}`);
    expect(last.result.content).toEqual([{ type: "text", text: "echo: hi" }]);
    // The task lives in our store, owned by the authenticated client.
    const record = await service.get(
      { principalId: "alice", tenantId: null, audience: null },
      created.task.taskId,
    );
    expect(record.status).toBe("completed");
  });

  it("relays an elicitation through the SDK's queue on tasks/result", async () => {
    const c = await connect("alice");
    c.setRequestHandler(ElicitRequestSchema, async () => ({ action: "accept", content: {} }));
    const messages = [];
    for await (const message of c.experimental.tasks.callToolStream(
      { name: "confirm", arguments: { question: "Go?" } },
      CallToolResultSchema,
      { task: {} },
    )) {
      messages.push(message);
    }
    const last = messages.at(-1);
    if (last?.type !== "result") throw new Error(`no result: ${JSON.stringify(last)}`);
    expect(last.result.content).toEqual([{ type: "text", text: "answer: accept" }]);
  });

  it("scopes tasks by owner: another client cannot see, list, read or cancel them", async () => {
    const a = await connect("alice");
    const a2 = await connect("alice");
    const b = await connect("bob");
    gates.set("p", new Gate());
    const created = await a.request(
      {
        method: "tools/call",
        params: { name: "slow_echo", arguments: { text: "x", gate: "p" }, task: {} },
      },
      CreateTaskResultSchema,
    );
    const { taskId } = created.task;
    await expect(b.experimental.tasks.getTask(taskId)).rejects.toMatchObject({ code: -32602 });
    await expect(b.experimental.tasks.cancelTask(taskId)).rejects.toMatchObject({ code: -32602 });
    await expect(
      b.experimental.tasks.getTaskResult(taskId, CallToolResultSchema),
    ).rejects.toMatchObject({ code: -32602 });
    expect((await b.experimental.tasks.listTasks()).tasks.map((t) => t.taskId)).not.toContain(
      taskId,
    );
    // The same principal in another session sees it.
    expect((await a2.experimental.tasks.getTask(taskId)).status).toBe("working");
    const cancelled = await a2.experimental.tasks.cancelTask(taskId);
    expect(cancelled.status).toBe("cancelled");
    gates.get("p")?.open();
  });

  it("scopes tasks by session when there is no auth info", async () => {
    const s1 = await connect();
    const s2 = await connect();
    gates.set("s", new Gate());
    const created = await s1.request(
      {
        method: "tools/call",
        params: { name: "slow_echo", arguments: { text: "x", gate: "s" }, task: {} },
      },
      CreateTaskResultSchema,
    );
    await expect(s2.experimental.tasks.getTask(created.task.taskId)).rejects.toMatchObject({
      code: -32602,
    });
    expect((await s1.experimental.tasks.getTask(created.task.taskId)).status).toBe("working");
    gates.get("s")?.open();
    const result = await s1.experimental.tasks.getTaskResult(
      created.task.taskId,
      CallToolResultSchema,
    );
    expect(result.content).toEqual([{ type: "text", text: "echo: x" }]);
  });
});

describe("SdkTaskStore trace context", () => {
  it("keeps the creating request's _meta.traceparent with the task, and ignores a bad one", async () => {
    const { store, close } = await memoryStore.create();
    try {
      const service = new TaskService({ store });
      const caller = owner({ principalId: "p", tenantId: "t" });
      const sdkStore = new SdkTaskStore({ service, ownerOf: () => caller });
      const traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
      const request = (meta: Record<string, unknown>) => ({
        method: "tools/call" as const,
        params: { name: "tool", arguments: {}, _meta: meta },
      });
      const traced = await sdkStore.createTask({}, 1, request({ traceparent, tracestate: "a=1" }));
      const recorded = await service.get(caller, traced.taskId);
      // With no SDK installed the creation span passes the incoming context on unchanged.
      expect(recorded.traceContext).toEqual({ traceparent, tracestate: "a=1" });
      const bad = await sdkStore.createTask({}, 2, request({ traceparent: "00-zz-01" }));
      expect((await service.get(caller, bad.taskId)).traceContext).toBeNull();
    } finally {
      await close();
    }
  });
});

describe("SdkTaskStore leases (the SDK runs a task's work in the process that created it)", () => {
  const caller = owner({ principalId: "p", tenantId: "t" });
  const request = { method: "tools/call" as const, params: { name: "job", arguments: {} } };

  it("fails a task whose process stopped renewing 'Worker lost', and keeps a renewed one running", async () => {
    const { store, close } = await memoryStore.create();
    const service = new TaskService({ store });
    const options = { service, ownerOf: () => caller, onError: () => {} };
    // `alive` renews its tasks' leases; `dead` stops at once, like a killed process;
    // `sweeper` is the next process, which recovers orphans.
    const alive = new SdkTaskStore({ ...options, lease: { durationMs: 1000, renewEveryMs: 50 } });
    const dead = new SdkTaskStore({
      ...options,
      lease: { durationMs: 1000, recoverOrphans: false },
    });
    const sweeper = new SdkTaskStore({ ...options, lease: { durationMs: 1000, renewEveryMs: 50 } });
    try {
      const kept = await alive.createTask({}, 1, request);
      const lost = await dead.createTask({}, 2, request);
      expect((await service.get(caller, lost.taskId)).execution.holder).toBe(dead.holder);
      dead.close();
      const failed = await service.waitFor(caller, lost.taskId, (t) => t.status === "failed", {
        signal: AbortSignal.timeout(10_000),
      });
      expect(failed.outcome).toEqual({ kind: "error", error: WORKER_LOST_ERROR });
      await expect(sweeper.getTaskResult(lost.taskId)).rejects.toMatchObject({
        code: WORKER_LOST_ERROR.code,
        message: WORKER_LOST_ERROR.message,
      });
      // The renewed task outlived the lost one's lease and more; its work still ends it.
      expect((await alive.getTask(kept.taskId))?.status).toBe("working");
      await alive.storeTaskResult(kept.taskId, "completed", { content: [] });
      expect((await alive.getTask(kept.taskId))?.status).toBe("completed");
    } finally {
      for (const s of [alive, dead, sweeper]) s.close();
      await close();
    }
  });
});

describe("SdkTaskStore on an unbound transport", () => {
  /** An SDK 1.x server on 127.0.0.1 whose requests carry `req.auth` when `x-owner` is sent. */
  async function serve(bind: boolean, warnings: string[]) {
    const fixture = await memoryStore.create();
    const service = new TaskService({ store: fixture.store, pollIntervalMs: 20 });
    const options = sdkTaskOptions({ service, onWarning: (message) => warnings.push(message) });
    const transports = new Map<string, StreamableHTTPServerTransport>();
    const http = createServer(async (req, res) => {
      const body = req.method === "POST" ? await readBody(req) : undefined;
      const who = req.headers["x-owner"];
      const auth: AuthInfo | undefined =
        typeof who === "string" ? { token: who, clientId: who, scopes: [] } : undefined;
      const sessionId = req.headers["mcp-session-id"];
      let transport = typeof sessionId === "string" ? transports.get(sessionId) : undefined;
      if (transport === undefined) {
        const created = new StreamableHTTPServerTransport({
          sessionIdGenerator: () => randomUUID(),
          onsessioninitialized: (id) => void transports.set(id, created),
        });
        const server = new McpServer(
          { name: "unbound", version: "1.0.0" },
          {
            capabilities: { tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } } },
            ...options,
          },
        );
        server.experimental.tasks.registerToolTask(
          "job",
          { inputSchema: {}, execution: { taskSupport: "required" } },
          {
            async createTask(_args, extra) {
              const task = await extra.taskStore.createTask({});
              void extra.taskStore.storeTaskResult(task.taskId, "completed", { content: [] });
              return { task };
            },
            getTask: (_args, extra) => extra.taskStore.getTask(extra.taskId),
            getTaskResult: (_args, extra) => extra.taskStore.getTaskResult(extra.taskId) as never,
          },
        );
        await server.connect(created);
        if (bind) SdkTaskStore.bindTransport(created);
        transport = created;
      }
      await transport.handleRequest(auth ? Object.assign(req, { auth }) : req, res, body);
    });
    await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
    const url = new URL(`http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`);
    const clients: Client[] = [];
    return {
      async runTask(who?: string) {
        const client = new Client({ name: "c", version: "1.0.0" });
        await client.connect(
          new StreamableHTTPClientTransport(url, {
            requestInit: { headers: who === undefined ? {} : { "x-owner": who } },
          }),
        );
        clients.push(client);
        const created = await client.request(
          { method: "tools/call", params: { name: "job", arguments: {}, task: {} } },
          CreateTaskResultSchema,
        );
        await client.experimental.tasks.getTaskResult(created.task.taskId, CallToolResultSchema);
        return client;
      },
      async close() {
        await Promise.all(clients.map((c) => c.close()));
        await Promise.all([...transports.values()].map((t) => t.close()));
        options.taskStore.close();
        http.closeAllConnections();
        await new Promise<void>((resolve) => http.close(() => resolve()));
        await fixture.close();
      },
    };
  }

  it("warns once when requests carry auth info the store cannot see", async () => {
    const warnings: string[] = [];
    const server = await serve(false, warnings);
    try {
      await server.runTask("alice");
      await waitUntil(() => warnings.length > 0);
      expect(warnings).toEqual([UNSEEN_AUTH_WARNING]);
      expect(UNSEEN_AUTH_WARNING).toContain("SdkTaskStore.bindTransport(transport)");
      await server.runTask("bob");
      await server.runTask("alice");
      expect(warnings).toHaveLength(1);
    } finally {
      await server.close();
    }
  });

  it("says nothing when the transport is bound, or when no request carries auth info", async () => {
    const warnings: string[] = [];
    const bound = await serve(true, warnings);
    const anonymous = await serve(false, warnings);
    try {
      await bound.runTask("alice");
      await anonymous.runTask();
      // One more exchange each, after the first ones finished.
      await bound.runTask("alice");
      await anonymous.runTask();
      expect(warnings).toEqual([]);
    } finally {
      await bound.close();
      await anonymous.close();
    }
  });
});

/** Resolves once `condition` holds, checking on each macrotask turn (no timing assertion). */
async function waitUntil(condition: () => boolean): Promise<void> {
  for (let i = 0; i < 1000 && !condition(); i++) {
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}
