import { once } from "node:events";
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import {
  OperatorView,
  type Owner,
  owner,
  type TaskEra,
  type TaskRecord,
  TaskRunner,
  TaskService,
  type ToolDefinition,
} from "@mcp-tasks/core";
import { MemoryTaskStore } from "@mcp-tasks/store-memory";
import { type ConsoleHandler, createConsoleHandler, type TrafficCounts } from "../../src/index.js";

export const ALICE = owner({ principalId: "alice", tenantId: "acme" });
export const BOB = owner({ principalId: "bob", tenantId: "acme" });
export const TOKENS: Readonly<Record<string, Owner>> = {
  "alice-token": ALICE,
  "bob-token": BOB,
};
export const ADMIN_TOKEN = "operator-secret";

/** A gate a test opens to let a `gated_job` finish; keyed by the job's `gate` argument. */
export class Gates {
  readonly #open = new Map<string, () => void>();
  readonly #waiting = new Map<string, Promise<void>>();

  wait(name: string, signal: AbortSignal): Promise<void> {
    let gate = this.#waiting.get(name);
    if (gate === undefined) {
      gate = new Promise<void>((resolve) => this.#open.set(name, resolve));
      this.#waiting.set(name, gate);
    }
    return new Promise<void>((resolve, reject) => {
      const onAbort = () => reject(signal.reason);
      if (signal.aborted) return onAbort();
      signal.addEventListener("abort", onAbort, { once: true });
      void gate.then(() => {
        signal.removeEventListener("abort", onAbort);
        resolve();
      });
    });
  }

  open(name: string): void {
    if (!this.#waiting.has(name)) this.#waiting.set(name, Promise.resolve());
    this.#open.get(name)?.();
  }
}

const text = (t: string) => ({ content: [{ type: "text", text: t }] });

/** The test tools: a job that waits on a gate (or its cancellation), and an elicitation. */
export function testTools(gates: Gates): ToolDefinition[] {
  return [
    {
      name: "gated_job",
      inputSchema: { type: "object", properties: { gate: { type: "string" } } },
      taskMode: "optional",
      async run(args, ctx) {
        const gate = String(args.gate);
        await ctx.setStatusMessage(`Waiting at gate ${gate}`);
        await gates.wait(gate, ctx.signal);
        return text(`Passed gate ${gate}`);
      },
    },
    {
      // Like the demo's confirm_delete: parks for one form elicitation.
      name: "confirm_delete",
      inputSchema: {
        type: "object",
        properties: { filename: { type: "string" } },
        required: ["filename"],
      },
      taskMode: "optional",
      async run(args, ctx) {
        const filename = String(args.filename);
        const { confirm } = await ctx.requireInput(
          {
            confirm: {
              method: "elicitation/create",
              params: {
                mode: "form",
                message: `Delete ${filename}?`,
                requestedSchema: {
                  type: "object",
                  properties: {
                    confirm: { type: "boolean", description: "Yes, delete it" },
                    reason: { type: "string", title: "Reason" },
                    copies: { type: "integer", title: "Copies to keep", minimum: 0, maximum: 9 },
                    mode: { type: "string", title: "Mode", enum: ["trash", "shred"] },
                  },
                  required: ["confirm", "mode"],
                },
              },
            },
          },
          `Waiting for confirmation to delete ${filename}`,
        );
        const answer = confirm as { action?: string; content?: Record<string, unknown> };
        return answer.action === "accept" && answer.content?.confirm === true
          ? text(`Deleted ${filename} (${String(answer.content.mode)})`)
          : text(`Kept ${filename}`);
      },
    },
  ];
}

/** Mutable request counts the traffic provider hands out. */
export class FakeTraffic {
  counts: { era: string; client: string; requests: number }[] = [];
  add(era: string, client: string, n: number): void {
    const row = this.counts.find((c) => c.era === era && c.client === client);
    if (row) row.requests += n;
    else this.counts.push({ era, client, requests: n });
  }
  snapshot = (): TrafficCounts => {
    const eras: Record<string, number> = {};
    for (const c of this.counts) eras[c.era] = (eras[c.era] ?? 0) + c.requests;
    return { eras, clients: this.counts.map((c) => ({ ...c })) };
  };
}

export interface ConsoleFixture {
  readonly url: string;
  readonly service: TaskService;
  readonly runner: TaskRunner;
  readonly gates: Gates;
  readonly traffic: FakeTraffic;
  readonly handler: ConsoleHandler;
  sampleTraffic(): Promise<void>;
  start(
    who: Owner,
    toolName: string,
    args: Record<string, unknown>,
    era?: TaskEra,
  ): Promise<TaskRecord>;
  close(): Promise<void>;
}

/** A real node:http server on 127.0.0.1 serving the console over a memory store. */
export async function startConsole(
  options: {
    trafficSampleMs?: number;
    maxStreams?: number;
    maxStreamsPerOwner?: number;
    operatorStreams?: number;
    onLiveRefused?: (limit: "owner" | "all") => void;
  } = {},
): Promise<ConsoleFixture> {
  const store = new MemoryTaskStore({ sweepIntervalMs: 0 });
  const service = new TaskService({ store, requireOwner: true });
  const gates = new Gates();
  const runner = new TaskRunner({ service, tools: testTools(gates) });
  const traffic = new FakeTraffic();
  const handler = createConsoleHandler({
    service,
    adminTokens: [ADMIN_TOKEN],
    operatorView: new OperatorView({ store }),
    resolveOwner: async (req: IncomingMessage) => {
      const match = /^Bearer (\S+)$/.exec(req.headers.authorization ?? "");
      return (match && TOKENS[match[1]!]) ?? null;
    },
    traffic: traffic.snapshot,
    trafficSampleMs: options.trafficSampleMs ?? 60_000,
    toolNames: ["gated_job", "confirm_delete"],
    ...(options.maxStreams !== undefined && { maxStreams: options.maxStreams }),
    ...(options.maxStreamsPerOwner !== undefined && {
      maxStreamsPerOwner: options.maxStreamsPerOwner,
    }),
    ...(options.operatorStreams !== undefined && { operatorStreams: options.operatorStreams }),
    ...(options.onLiveRefused !== undefined && { onLiveRefused: options.onLiveRefused }),
  });
  const server: Server = createServer((req, res) => void handler(req, res));
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/console`,
    service,
    runner,
    gates,
    traffic,
    handler,
    sampleTraffic: () => handler.sampleTraffic(),
    start: (who, toolName, args, era = "2026-07-28") =>
      runner.start(who, { era, request: { toolName, arguments: args } }),
    async close() {
      await handler.close();
      server.closeAllConnections();
      server.close();
      runner.stopClaiming();
      runner.abortAll();
      await runner.shutdown({ drainMs: 2000 });
      await store.close();
    },
  };
}
