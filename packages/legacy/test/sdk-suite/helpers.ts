/**
 * Shared set-up of the ported `@modelcontextprotocol/sdk` 1.x task tests (see
 * `../sdk-suite.test.ts`): where the SDK's tests say `new InMemoryTaskStore()`, these say
 * `await env.taskStore()`, an `SdkTaskStore` over a fresh memory or PostgreSQL store.
 *
 * `waitForTaskStatus`, `listenOnRandomPort` and `createInMemoryTaskEnvironment` are copied
 * (the last adapted to take its store from a {@link TaskEnvironment}) from
 * modelcontextprotocol/typescript-sdk (MIT, Copyright (c) 2024 Anthropic, PBC),
 * `test/helpers/tasks.ts`, `test/helpers/http.ts` and `test/helpers/mcp.ts` at tag 1.30.0
 * (2d889f2b329e46680ec9bdd565de4616c497825a).
 */
import type { Server as HttpServer } from "node:http";
import type { AddressInfo } from "node:net";
import { TaskService, type TaskServiceOptions } from "@mcp-tasks/core";
import { MemoryTaskStore } from "@mcp-tasks/store-memory";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import type {
  ClientCapabilities,
  ServerCapabilities,
  Task,
} from "@modelcontextprotocol/sdk/types.js";
import { afterEach } from "vitest";
import { SdkTaskMessageQueue, SdkTaskStore } from "../../src/sdk-task-store.js";
import type { StoreFactory, StoreFixture } from "../fixtures.js";

export { postgresStore } from "../stores.js";

/**
 * The memory store, as `../fixtures.js` builds it (not imported from there: this suite
 * needs only the `sdk-task-store` entry point, not the legacy handler stack).
 */
export const memoryStore: StoreFactory = {
  name: "memory",
  async create() {
    return { store: new MemoryTaskStore({ sweepIntervalMs: 0 }), close: async () => {} };
  },
};

/**
 * The service behind each store: the SDK store's observable defaults, so its tests' numbers
 * hold: pages of 10, no ttl unless asked for (and no maximum), a 1000 ms poll interval.
 */
export type ServiceSettings = Omit<TaskServiceOptions, "store">;

const SDK_LIKE: ServiceSettings = {
  defaultPageSize: 10,
  ttl: { defaultTtlMs: null, maxTtlMs: null },
  pollIntervalMs: 1000,
};

/** Fresh stores for each test, closed after it. */
export interface TaskEnvironment {
  /** An `SdkTaskStore` over a fresh, empty store. */
  taskStore(settings?: ServiceSettings): Promise<SdkTaskStore>;
  /** An `SdkTaskMessageQueue`. */
  messageQueue(): SdkTaskMessageQueue;
}

/** Registers the teardown; call at describe level. */
export function taskEnvironment(factory: StoreFactory): TaskEnvironment {
  const open: StoreFixture[] = [];
  const stores: SdkTaskStore[] = [];
  afterEach(async () => {
    for (const store of stores.splice(0)) store.close();
    await Promise.all(open.splice(0).map((fixture) => fixture.close()));
  });
  return {
    async taskStore(settings = {}) {
      const fixture = await factory.create();
      open.push(fixture);
      const service = new TaskService({ ...SDK_LIKE, ...settings, store: fixture.store });
      // The SDK's own tests close stores under running work: those reports are expected.
      const store = new SdkTaskStore({ service, onError: () => {} });
      stores.push(store);
      return store;
    },
    messageQueue: () => new SdkTaskMessageQueue(),
  };
}

/**
 * Polls the provided getTask function until the task reaches the desired status or times out.
 */
export async function waitForTaskStatus(
  getTask: (taskId: string) => Promise<Task | null | undefined>,
  taskId: string,
  desiredStatus: Task["status"],
  { intervalMs = 100, timeoutMs = 10_000 }: { intervalMs?: number; timeoutMs?: number } = {},
): Promise<Task> {
  const start = Date.now();
  while (true) {
    const task = await getTask(taskId);
    if (task && task.status === desiredStatus) {
      return task;
    }
    if (Date.now() - start > timeoutMs) {
      throw new Error(`Timed out waiting for task ${taskId} to reach status ${desiredStatus}`);
    }
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

/**
 * Attach a listener to an existing server on a random localhost port and return its base URL.
 */
export async function listenOnRandomPort(server: HttpServer, host = "127.0.0.1"): Promise<URL> {
  return new Promise<URL>((resolve) => {
    server.listen(0, host, () => {
      const addr = server.address() as AddressInfo;
      resolve(new URL(`http://${host}:${addr.port}`));
    });
  });
}

export interface InMemoryTaskEnvironment {
  client: Client;
  server: Server;
  taskStore: SdkTaskStore;
  clientTransport: InMemoryTransport;
  serverTransport: InMemoryTransport;
}

export async function createInMemoryTaskEnvironment(
  env: TaskEnvironment,
  options?: {
    clientCapabilities?: ClientCapabilities;
    serverCapabilities?: ServerCapabilities;
  },
): Promise<InMemoryTaskEnvironment> {
  const taskStore = await env.taskStore();
  const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();

  const client = new Client(
    {
      name: "test-client",
      version: "1.0.0",
    },
    {
      capabilities: options?.clientCapabilities ?? {
        tasks: {
          list: {},
          requests: {
            tools: {
              call: {},
            },
          },
        },
      },
    },
  );

  const server = new Server(
    {
      name: "test-server",
      version: "1.0.0",
    },
    {
      capabilities: options?.serverCapabilities ?? {
        tasks: {
          list: {},
          requests: {
            tools: {
              call: {},
            },
          },
        },
      },
      taskStore,
      taskMessageQueue: env.messageQueue(),
    },
  );

  await Promise.all([client.connect(clientTransport), server.connect(serverTransport)]);

  return {
    client,
    server,
    taskStore,
    clientTransport,
    serverTransport,
  };
}
