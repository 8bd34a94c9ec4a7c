import { owner, type TaskRecord, TaskRunner, TaskService, type TaskStore } from "@mcp-tasks/core";
import { openScratchTaskStore } from "@mcp-tasks/store-drizzle/testing";
import { MemoryTaskStore } from "@mcp-tasks/store-memory";
import { TasksExtension, type TasksRequestContext, type TasksTool } from "../src/index.js";

export const EXT = "io.modelcontextprotocol/tasks";
export const WITH_EXT = { extensions: { [EXT]: {} } };
export const ALICE = owner({ principalId: "alice", tenantId: "acme" });
export const BOB = owner({ principalId: "bob", tenantId: "acme" });

/** A promise-based gate tools wait on, opened by the test. */
export class Gates {
  readonly #open = new Map<string, () => void>();
  readonly #waiting = new Map<string, Promise<void>>();
  wait(name: string, signal: AbortSignal): Promise<void> {
    let promise = this.#waiting.get(name);
    if (!promise) {
      promise = new Promise<void>((resolve) => this.#open.set(name, resolve));
      this.#waiting.set(name, promise);
    }
    return new Promise<void>((resolve, reject) => {
      signal.throwIfAborted();
      signal.addEventListener("abort", () => reject(signal.reason), { once: true });
      promise.then(resolve);
    });
  }
  open(name: string): void {
    if (!this.#waiting.has(name)) this.#waiting.set(name, Promise.resolve());
    this.#open.get(name)?.();
  }
}

export function tools(gates: Gates): TasksTool[] {
  const text = (t: string) => ({ content: [{ type: "text", text: t }] });
  return [
    {
      name: "echo",
      inputSchema: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
      taskMode: "never",
      run: (args) => text(`echo: ${String(args.text)}`),
    },
    {
      name: "work",
      inputSchema: { type: "object", properties: { gate: { type: "string" } } },
      taskMode: "optional",
      async run(args, ctx) {
        if (typeof args.gate === "string") await gates.wait(args.gate, ctx.signal);
        return {
          ...text("worked"),
          _meta: { "io.modelcontextprotocol/related-task": { taskId: ctx.taskId }, keep: 1 },
        };
      },
    },
    {
      name: "ask",
      inputSchema: { type: "object", properties: {} },
      taskMode: "optional",
      async run(_args, ctx) {
        const answers = await ctx.requireInput({
          first: {
            method: "elicitation/create",
            params: { message: "1?", requestedSchema: { type: "object", properties: {} } },
          },
          second: {
            method: "elicitation/create",
            params: { message: "2?", requestedSchema: { type: "object", properties: {} } },
          },
        });
        return text(JSON.stringify(answers));
      },
    },
    {
      name: "tool_error",
      inputSchema: { type: "object", properties: {} },
      taskMode: "always",
      run: () => ({ ...text("bad input"), isError: true }),
    },
    {
      name: "crash",
      inputSchema: { type: "object", properties: {} },
      taskMode: "optional",
      run: () => {
        throw Object.assign(new Error("kaboom"), { code: -32050, data: { why: "test" } });
      },
    },
    {
      name: "named",
      inputSchema: { type: "object", properties: {} },
      taskMode: "always",
      preflight(args, responses) {
        const answer = responses.who as
          | { action?: string; content?: { name?: string } }
          | undefined;
        if (answer?.action === "accept" && answer.content?.name) {
          return { kind: "proceed", arguments: { ...args, who: answer.content.name } };
        }
        return {
          kind: "input_required",
          inputRequests: { who: { method: "elicitation/create", params: { message: "Name?" } } },
        };
      },
      run: (args) => text(`hi ${String(args.who)}`),
    },
  ];
}

export interface Harness {
  ext: TasksExtension;
  service: TaskService;
  runner: TaskRunner;
  gates: Gates;
  close(): Promise<void>;
}

/** Quotas a test store is opened with. */
export interface StoreLimits {
  readonly maxTasksPerOwner?: number;
}

/** A store for one test, and how to remove it and its data afterwards. */
export interface StoreFactory {
  readonly name: string;
  open(limits?: StoreLimits): Promise<{ store: TaskStore; dispose(): Promise<void> }>;
}

export const DATABASE_URL = process.env.DATABASE_URL || "postgres://postgres@127.0.0.1:5432/test";

export const memoryStore: StoreFactory = {
  name: "memory",
  async open(limits = {}) {
    return {
      store: new MemoryTaskStore({ sweepIntervalMs: 0, ...limits }),
      dispose: async () => {},
    };
  },
};

/** PostgreSQL (`@mcp-tasks/store-drizzle`), a fresh schema per test, dropped afterwards. */
export const postgresStore: StoreFactory = {
  name: "postgres",
  async open(limits = {}) {
    const { store, dispose } = await openScratchTaskStore({
      url: DATABASE_URL,
      prefix: "ext_test",
      poolSize: 4,
      ...limits,
    });
    return { store, dispose };
  },
};

/** The stores every handler test runs on. */
export const STORES: readonly StoreFactory[] = [memoryStore, postgresStore];

export async function harness(
  factory: StoreFactory = memoryStore,
  limits: StoreLimits = {},
): Promise<Harness> {
  const { store, dispose } = await factory.open(limits);
  const service = new TaskService({ store, pollIntervalMs: 100 });
  // No per-owner cap: these tests are about the wire (fair share has tests of its own in
  // core and the demo). Under a cap, whether a task is created to run at once can turn on
  // a claim still out from an earlier run's end, so two creates back to back (the node
  // handler's and the SDK's, compared) could get different answers.
  const runner = new TaskRunner({
    service,
    onError: () => {},
    maxRunningPerOwner: Number.POSITIVE_INFINITY,
  });
  const gates = new Gates();
  const ext = new TasksExtension({ service, runner, tools: tools(gates) });
  return {
    ext,
    service,
    runner,
    gates,
    async close() {
      runner.stopClaiming();
      runner.abortAll();
      await runner.drain();
      await store.close();
      await dispose();
    },
  };
}

export function ctx(
  who = ALICE,
  extra: Partial<TasksRequestContext> & { capabilities?: unknown } = {},
): TasksRequestContext {
  const { capabilities, ...rest } = extra;
  return {
    owner: who,
    clientCapabilities: capabilities === undefined ? WITH_EXT : capabilities,
    ...rest,
  };
}

export function resultOf<T>(outcome: { result: T } | { error: unknown }): T {
  if ("error" in outcome) throw new Error(`unexpected error ${JSON.stringify(outcome.error)}`);
  return outcome.result;
}

export function errorOf(
  outcome: { result: unknown } | { error: { code: number; message: string; data?: unknown } },
) {
  if (!("error" in outcome))
    throw new Error(`expected an error, got ${JSON.stringify(outcome.result)}`);
  return outcome.error;
}

export async function startTask(
  h: Harness,
  name: string,
  args: Record<string, unknown> = {},
): Promise<string> {
  const result = resultOf(await h.ext.callTool(ctx(), { name, arguments: args })) as {
    taskId?: string;
  };
  if (!result.taskId) throw new Error("no task");
  return result.taskId;
}

export function settled(h: Harness, taskId: string, who = ALICE): Promise<TaskRecord> {
  return h.service.waitFor(who, taskId, (t) =>
    ["completed", "failed", "cancelled"].includes(t.status),
  );
}
