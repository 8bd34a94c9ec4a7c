import { createServer, type Server as HttpServer } from "node:http";
import type { AddressInfo } from "node:net";
import {
  type Owner,
  owner,
  TaskRunner,
  type TaskRunnerOptions,
  TaskService,
  type TaskStore,
  type ToolDefinition,
} from "@mcp-tasks/core";
import { MemoryTaskStore } from "@mcp-tasks/store-memory";
import { toNodeHandler } from "@modelcontextprotocol/node";
import { createLegacyHandler, type LegacyFetchExtra, type LegacyHandler } from "../src/index.js";

export const alice: Owner = owner({ principalId: "alice", tenantId: "acme" });
export const bob: Owner = owner({ principalId: "bob", tenantId: "acme" });

/** A store under test, with its teardown. */
export interface StoreFixture {
  readonly store: TaskStore;
  close(): Promise<void>;
}

export interface StoreFactory {
  readonly name: string;
  create(): Promise<StoreFixture>;
}

export const memoryStore: StoreFactory = {
  name: "memory",
  async create() {
    const store = new MemoryTaskStore({ sweepIntervalMs: 0 });
    return { store, close: async () => {} };
  },
};

/** A one-shot latch a test opens to let a tool go on. */
export class Gate {
  #open!: () => void;
  readonly opened = new Promise<void>((resolve) => {
    this.#open = resolve;
  });
  open(): void {
    this.#open();
  }
}

export function text(value: string) {
  return { content: [{ type: "text", text: value }] };
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) {
      reject(signal.reason);
      return;
    }
    const timer = setTimeout(resolve, ms);
    signal.addEventListener(
      "abort",
      () => {
        clearTimeout(timer);
        reject(signal.reason);
      },
      { once: true },
    );
  });
}

/** The fixture tools shared by handler and interop tests. */
export function fixtureTools(gates: Map<string, Gate> = new Map()): ToolDefinition[] {
  return [
    {
      name: "echo",
      description: "Echoes `text`; synchronous only",
      inputSchema: { type: "object", properties: { text: { type: "string" } } },
      taskMode: "never",
      run: (args) => text(String(args.text ?? "")),
    },
    {
      name: "counting_job",
      description: "Waits for gate `gate`, reports progress 1..3 of 3, then completes",
      inputSchema: { type: "object", properties: { gate: { type: "string" } } },
      taskMode: "optional",
      run: async (args, ctx) => {
        const gate = typeof args.gate === "string" ? gates.get(args.gate) : undefined;
        await gate?.opened;
        ctx.reportProgress(1, 3, "one");
        ctx.reportProgress(2, 3);
        ctx.reportProgress(3, 3, "three");
        return text("counted");
      },
    },
    {
      name: "slow_echo",
      description: "Echoes `text` after `ms` (or when gate `gate` opens)",
      inputSchema: {
        type: "object",
        properties: { text: { type: "string" }, ms: { type: "number" } },
      },
      taskMode: "optional",
      run: async (args, ctx) => {
        await ctx.setStatusMessage("working on it");
        const gate = typeof args.gate === "string" ? gates.get(args.gate) : undefined;
        if (gate) {
          // The signal may have fired while the status message was being written.
          ctx.signal.throwIfAborted();
          await Promise.race([
            gate.opened,
            new Promise((_, reject) =>
              ctx.signal.addEventListener("abort", () => reject(ctx.signal.reason), { once: true }),
            ),
          ]);
        } else {
          await sleep(typeof args.ms === "number" ? args.ms : 50, ctx.signal);
        }
        return text(`echo: ${String(args.text ?? "")}`);
      },
    },
    {
      name: "confirm",
      description: "Asks the user to confirm by elicitation, then answers",
      inputSchema: { type: "object", properties: { question: { type: "string" } } },
      taskMode: "always",
      run: async (args, ctx) => {
        const { answer } = await ctx.requireInput({
          answer: {
            method: "elicitation/create",
            params: {
              mode: "form",
              message: String(args.question ?? "Proceed?"),
              requestedSchema: {
                type: "object",
                properties: { ok: { type: "boolean" } },
                required: ["ok"],
              },
            },
          },
        });
        return text(`answer: ${JSON.stringify(answer)}`);
      },
    },
    {
      name: "ask",
      description: "Asks the user a question; runs synchronously or as a task",
      inputSchema: { type: "object", properties: {} },
      taskMode: "optional",
      run: async (_args, ctx) => {
        const { reply } = await ctx.requireInput({
          reply: {
            method: "elicitation/create",
            params: {
              mode: "form",
              message: "Name?",
              requestedSchema: { type: "object", properties: { name: { type: "string" } } },
            },
          },
        });
        return text(`reply: ${JSON.stringify(reply)}`);
      },
    },
    {
      name: "greet_later",
      description: "Asks for a name before the task exists, then greets in a task",
      inputSchema: { type: "object", properties: { name: { type: "string" } } },
      taskMode: "always",
      preflight: (args, answers) => {
        if (typeof args.name === "string") return { kind: "proceed", arguments: args };
        const answer = answers.user_name as { content?: { name?: unknown } } | undefined;
        if (answer !== undefined) {
          const name = answer.content?.name;
          return {
            kind: "proceed",
            arguments: { name: typeof name === "string" ? name : "friend" },
          };
        }
        return {
          kind: "input_required",
          inputRequests: {
            user_name: {
              method: "elicitation/create",
              params: {
                mode: "form",
                message: "Your name?",
                requestedSchema: { type: "object", properties: { name: { type: "string" } } },
              },
            },
          },
        };
      },
      run: (args) => text(`Hello, ${String(args.name)}!`),
    },
    {
      name: "summarize",
      description: "Asks the client to sample a summary",
      inputSchema: { type: "object", properties: {} },
      taskMode: "always",
      run: async (_args, ctx) => {
        const { sample } = await ctx.requireInput({
          sample: {
            method: "sampling/createMessage",
            params: {
              messages: [{ role: "user", content: { type: "text", text: "Summarize" } }],
              maxTokens: 10,
            },
          },
        });
        return text(`sampled: ${JSON.stringify(sample)}`);
      },
    },
    {
      name: "failing_job",
      description: "Returns a tool error",
      inputSchema: { type: "object", properties: {} },
      taskMode: "always",
      run: () => ({ ...text("the job failed"), isError: true }),
    },
    {
      name: "protocol_error_job",
      description: "Fails with a JSON-RPC error",
      inputSchema: { type: "object", properties: {} },
      taskMode: "optional",
      run: () => {
        throw Object.assign(new Error("quota exceeded"), { code: -32050, data: { retry: false } });
      },
    },
  ];
}

export interface Stack {
  readonly service: TaskService;
  readonly runner: TaskRunner;
  readonly gates: Map<string, Gate>;
  readonly tools: ToolDefinition[];
}

export function stack(
  store: TaskStore,
  serviceOptions: { maxTtlMs?: number } = {},
  runnerOptions: Pick<TaskRunnerOptions, "maxRunningPerOwner"> = {},
): Stack {
  const service = new TaskService({
    store,
    pollIntervalMs: 20,
    ttl: { defaultTtlMs: 60_000, maxTtlMs: serviceOptions.maxTtlMs ?? 3_600_000 },
  });
  const runner = new TaskRunner({ service, onError: () => {}, ...runnerOptions });
  const gates = new Map<string, Gate>();
  return { service, runner, gates, tools: fixtureTools(gates) };
}

/** Records every HTTP exchange: the JSON-RPC methods posted and what came back. */
export interface WireTap {
  readonly exchanges: { method: string; body: unknown; responseText: Promise<string> }[];
}

export interface RunningServer {
  readonly url: URL;
  readonly legacy: LegacyHandler;
  readonly stack: Stack;
  readonly tap: WireTap;
  close(): Promise<void>;
}

/** Owner from the `x-owner` header; anonymous without it. */
export function ownerFromHeader(request: Request): Owner {
  const name = request.headers.get("x-owner");
  return name === null ? owner({}) : owner({ principalId: name, tenantId: "acme" });
}

/** Serves the legacy handler on 127.0.0.1, port 0, with a wire tap in front. */
export async function startServer(s: Stack): Promise<RunningServer> {
  const legacy = createLegacyHandler({
    service: s.service,
    runner: s.runner,
    tools: s.tools,
    ownerOf: ownerFromHeader,
    serverInfo: { name: "legacy-test", version: "0.0.0" },
    onError: () => {},
  });
  const tap: WireTap = { exchanges: [] };
  const tapped = {
    async fetch(request: Request, extra?: LegacyFetchExtra) {
      let body: unknown;
      if (request.method === "POST")
        body = await request
          .clone()
          .json()
          .catch(() => undefined);
      const response = await legacy.fetch(request, extra);
      const method =
        request.method === "POST" && typeof body === "object" && body !== null && "method" in body
          ? String((body as { method: unknown }).method)
          : request.method;
      if (response.body === null || request.method === "GET") {
        tap.exchanges.push({ method, body, responseText: Promise.resolve("") });
        return response;
      }
      const [mine, theirs] = response.body.tee();
      tap.exchanges.push({ method, body, responseText: new Response(mine).text() });
      return new Response(theirs, { status: response.status, headers: response.headers });
    },
  };
  const handle = toNodeHandler(tapped);
  const http: HttpServer = createServer((req, res) => void handle(req as never, res as never));
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  const { port } = http.address() as AddressInfo;
  return {
    url: new URL(`http://127.0.0.1:${port}/mcp`),
    legacy,
    stack: s,
    tap,
    async close() {
      s.runner.stopClaiming();
      s.runner.abortAll();
      await legacy.close();
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
      await s.runner.drain();
    },
  };
}
