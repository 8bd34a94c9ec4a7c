import { createServer, type RequestListener } from "node:http";
import type { AddressInfo } from "node:net";
import { isTerminal, ManualClock, type TaskService, type TaskStore } from "@mcp-tasks/core";
import { MemoryTaskStore } from "@mcp-tasks/store-memory";
import { toNodeHandler } from "@modelcontextprotocol/node";
import { afterAll, beforeAll, describe, expect, it, onTestFinished, vi } from "vitest";
import { TaskNotifier } from "../src/http/task-notifier.js";
import { createLegacyHandler, type LegacyHandler } from "../src/index.js";
import { InputRegistry } from "../src/input-registry.js";
import {
  alice,
  Gate,
  memoryStore,
  ownerFromHeader,
  type StoreFixture,
  stack,
  startServer,
} from "./fixtures.js";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const HEADERS = {
  "content-type": "application/json",
  accept: "application/json, text/event-stream",
};

/** Posts a 2025-11-25 `initialize` as `who`. */
function postInitialize(url: URL | string, who: string): Promise<Response> {
  return fetch(url, {
    method: "POST",
    headers: { ...HEADERS, "x-owner": who },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 0,
      method: "initialize",
      params: {
        protocolVersion: "2025-11-25",
        capabilities: {},
        clientInfo: { name: "raw", version: "0" },
      },
    }),
  });
}

/** Opens an initialized 2025-11-25 session of `who`: the headers of its requests. */
async function openSession(url: URL | string, who: string): Promise<Record<string, string>> {
  const response = await postInitialize(url, who);
  await response.text();
  const headers = {
    ...HEADERS,
    "x-owner": who,
    "mcp-session-id": response.headers.get("mcp-session-id") as string,
    "mcp-protocol-version": "2025-11-25",
  };
  await fetch(url, {
    method: "POST",
    headers,
    body: JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }),
  }).then((r) => r.text());
  return headers;
}

/** Opens a session's standalone stream; it is cancelled when the test ends. */
async function openStream(url: URL | string, headers: Record<string, string>) {
  const stream = await fetch(url, {
    method: "GET",
    headers: { ...headers, accept: "text/event-stream" },
  });
  const reader = (stream.body as ReadableStream<Uint8Array>).getReader();
  onTestFinished(() => void reader.cancel().catch(() => {}));
  return reader;
}

/** What a stream carried up to a `completed` status (or its end). */
async function readUntilCompleted(reader: ReadableStreamDefaultReader<Uint8Array>) {
  const decoder = new TextDecoder();
  let seen = "";
  while (!/"status":"completed"/.test(seen)) {
    const { value, done } = await reader.read();
    if (done) break;
    seen += decoder.decode(value, { stream: true });
  }
  return seen;
}

describe("createLegacyHandler sessions", () => {
  let fixture: StoreFixture;
  let legacy: LegacyHandler;
  let url: URL;
  let close: () => Promise<void>;
  const clock = new ManualClock(1_000_000);
  let gates: Map<string, Gate>;
  let service: TaskService;

  beforeAll(async () => {
    fixture = await memoryStore.create();
    // No owner cap: the equivalence tests compare pairs of creates, and a held task of an
    // earlier pair ending between the two would queue one and not the other.
    const s = stack(fixture.store, {}, { maxRunningPerOwner: Number.POSITIVE_INFINITY });
    gates = s.gates;
    service = s.service;
    legacy = createLegacyHandler({
      service: s.service,
      runner: s.runner,
      tools: s.tools,
      ownerOf: ownerFromHeader,
      serverInfo: { name: "sessions", version: "0.0.0" },
      sessionIdleTimeoutMs: 60_000,
      clock,
      onError: () => {},
    });
    const http = createServer(toNodeHandler(legacy) as RequestListener);
    await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
    url = new URL(`http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`);
    close = async () => {
      await legacy.close();
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    };
  });
  afterAll(async () => {
    await close();
    await fixture.close();
  });

  async function initialize(who: string): Promise<string> {
    const response = await postInitialize(url, who);
    const text = await response.text();
    expect(text).toContain('"tasks":{"list":{},"cancel":{},"requests":{"tools":{"call":{}}}}');
    const id = response.headers.get("mcp-session-id");
    if (id === null) throw new Error("no session id");
    return id;
  }

  function list(sessionId: string, who: string) {
    return fetch(url, {
      method: "POST",
      headers: {
        ...HEADERS,
        "x-owner": who,
        "mcp-session-id": sessionId,
        "mcp-protocol-version": "2025-11-25",
      },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tasks/list", params: {} }),
    });
  }

  it("rejects requests without a session and non-initialize first requests", async () => {
    const response = await fetch(url, {
      method: "POST",
      headers: HEADERS,
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tasks/list", params: {} }),
    });
    expect(response.status).toBe(400);
  });

  it("answers a foreign owner of a session like an unknown session", async () => {
    const id = await initialize("carol");
    expect((await list(id, "carol")).status).toBe(200);
    expect((await list(id, "dave")).status).toBe(404);
    expect((await list("no-such-session", "carol")).status).toBe(404);
  });

  it("answers a session's tasks/get directly exactly as through the transport", async () => {
    const id = await initialize("frank");
    const headers = {
      ...HEADERS,
      "x-owner": "frank",
      "mcp-session-id": id,
      "mcp-protocol-version": "2025-11-25",
    };
    const post = (body: unknown, extra: Record<string, string> = {}) =>
      fetch(url, { method: "POST", headers: { ...headers, ...extra }, body: JSON.stringify(body) });
    await post({ jsonrpc: "2.0", method: "notifications/initialized" }).then((r) => r.text());
    gates.set("direct", new Gate());
    const created = await (
      await post({
        jsonrpc: "2.0",
        id: 2,
        method: "tools/call",
        params: {
          name: "slow_echo",
          arguments: { text: "x", gate: "direct" },
          task: { ttl: 60_000 },
        },
      })
    ).text();
    const taskId = /"taskId":"([^"]+)"/.exec(created)?.[1] as string;
    expect(taskId).toBeTruthy();
    // The task holds still (status message written, gate closed) while both paths read it.
    for (let i = 0; i < 200; i++) {
      const read = await post({ jsonrpc: "2.0", id: 9, method: "tasks/get", params: { taskId } });
      if ((await read.text()).includes("working on it")) break;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    const frank = ownerFromHeader(new Request(url, { headers }));
    onTestFinished(() => gates.get("direct")?.open());
    const cases: [unknown, Record<string, string>][] = [
      [{ jsonrpc: "2.0", id: 3, method: "tasks/get", params: { taskId } }, {}],
      [{ jsonrpc: "2.0", id: "s", method: "tasks/get", params: { taskId, _meta: { a: 1 } } }, {}],
      [{ jsonrpc: "2.0", id: 4, method: "tasks/get", params: { taskId: "unknown" } }, {}],
      [{ jsonrpc: "2.0", id: 5, method: "tasks/get", params: { taskId } }, { "x-owner": "gina" }],
    ];
    for (const [i, [body, extra]] of cases.entries()) {
      const through = await post(body, extra);
      const direct = await legacy.answerDirect({
        headers: new Headers({ ...headers, ...extra }),
        owner: ownerFromHeader(new Request(url, { headers: { ...headers, ...extra } })),
        parsedBody: body,
      });
      if (direct === undefined) {
        // Not for the lean path (a foreign owner): the transport answers 404.
        expect(through.status, `case ${i}`).toBe(404);
        continue;
      }
      expect(direct.status, `case ${i}`).toBe(through.status);
      expect(direct.body, `case ${i}`).toBe(await through.text());
      for (const name of ["content-type", "cache-control", "mcp-session-id"]) {
        const value = Object.entries(direct.headers).find(([k]) => k.toLowerCase() === name)?.[1];
        expect(value, `case ${i} ${name}`).toBe(through.headers.get(name));
      }
    }
    // Other methods, unusual bodies and headers go through `fetch`.
    const declined = [
      { jsonrpc: "2.0", id: 6, method: "tasks/list", params: {} },
      { jsonrpc: "2.0", id: 7, method: "tasks/get", params: { taskId: 5 } },
      { jsonrpc: "2.0", id: 8, method: "tasks/get", params: { taskId }, extra: 1 },
      [{ jsonrpc: "2.0", id: 9, method: "tasks/get", params: { taskId } }],
    ];
    for (const body of declined) {
      const answer = await legacy.answerDirect({
        headers: new Headers(headers),
        owner: frank,
        parsedBody: body,
      });
      expect(answer, JSON.stringify(body)).toBeUndefined();
    }
    const notAcceptable = await legacy.answerDirect({
      headers: new Headers({ ...headers, accept: "application/json" }),
      owner: frank,
      parsedBody: cases[0]?.[0],
    });
    expect(notAcceptable).toBeUndefined();
  });

  it("answers a session's task-augmented tools/call directly exactly as through the transport", async () => {
    const id = await initialize("hank");
    const headers = {
      ...HEADERS,
      "x-owner": "hank",
      "mcp-session-id": id,
      "mcp-protocol-version": "2025-11-25",
    };
    const post = (body: unknown, extra: Record<string, string> = {}) =>
      fetch(url, { method: "POST", headers: { ...headers, ...extra }, body: JSON.stringify(body) });
    await post({ jsonrpc: "2.0", method: "notifications/initialized" }).then((r) => r.text());
    gates.set("call", new Gate());
    onTestFinished(() => gates.get("call")?.open());
    const hold = { text: "x", gate: "call" };
    const call = (params: Record<string, unknown>, callId: unknown = 11) => ({
      jsonrpc: "2.0",
      id: callId,
      method: "tools/call",
      params,
    });
    const traceparent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
    const cases: [string, unknown, Record<string, string>, boolean][] = [
      ["ttl", call({ name: "slow_echo", arguments: hold, task: { ttl: 60_000 } }), {}, true],
      ["no ttl", call({ name: "slow_echo", arguments: hold, task: {} }), {}, true],
      ["no arguments", call({ name: "slow_echo", task: {} }), {}, true],
      ["a string id", call({ name: "slow_echo", arguments: hold, task: {} }, "c"), {}, true],
      [
        "ttl past the maximum",
        call({ name: "slow_echo", arguments: hold, task: { ttl: 1e12 } }),
        {},
        true,
      ],
      ["a task-only tool", call({ name: "confirm", arguments: {}, task: {} }), {}, true],
      [
        "a progress token",
        call({ name: "slow_echo", arguments: hold, task: {}, _meta: { progressToken: 5 } }),
        {},
        true,
      ],
      [
        "_meta.traceparent",
        call({ name: "slow_echo", arguments: hold, task: {}, _meta: { traceparent } }),
        {},
        true,
      ],
      [
        "traceparent header",
        call({ name: "slow_echo", arguments: hold, task: {} }),
        { traceparent },
        true,
      ],
      ["no task param, task-only tool", call({ name: "confirm", arguments: {} }), {}, false],
      ["no task param, optional tool", call({ name: "echo", arguments: { text: "y" } }), {}, false],
      [
        "a task for a tool that forbids one",
        call({ name: "echo", arguments: {}, task: {} }),
        {},
        false,
      ],
      ["an unknown tool", call({ name: "nope", arguments: {}, task: {} }), {}, false],
      [
        "a tool with a preflight",
        call({ name: "greet_later", arguments: {}, task: {} }),
        {},
        false,
      ],
      ["arguments an array", call({ name: "slow_echo", arguments: [], task: {} }), {}, false],
      ["arguments null", call({ name: "slow_echo", arguments: null, task: {} }), {}, false],
      ["ttl negative", call({ name: "slow_echo", arguments: hold, task: { ttl: -1 } }), {}, false],
      [
        "ttl fractional",
        call({ name: "slow_echo", arguments: hold, task: { ttl: 1.5 } }),
        {},
        false,
      ],
      ["ttl a string", call({ name: "slow_echo", arguments: hold, task: { ttl: "1" } }), {}, false],
      ["task null", call({ name: "slow_echo", arguments: hold, task: null }), {}, false],
      ["task extra key", call({ name: "slow_echo", arguments: hold, task: { x: 1 } }), {}, false],
      [
        "a bad progress token",
        call({ name: "slow_echo", arguments: hold, task: {}, _meta: { progressToken: {} } }),
        {},
        false,
      ],
      [
        "other _meta",
        call({ name: "slow_echo", arguments: hold, task: {}, _meta: { other: 1 } }),
        {},
        false,
      ],
      ["a name not a string", call({ name: 5, arguments: hold, task: {} }), {}, false],
      ["extra params", call({ name: "slow_echo", arguments: hold, task: {}, x: 1 }), {}, false],
      [
        "JSON only accepted",
        call({ name: "slow_echo", arguments: hold, task: {} }),
        { accept: "application/json" },
        false,
      ],
      [
        "a foreign owner",
        call({ name: "slow_echo", arguments: hold, task: {} }),
        { "x-owner": "ivy" },
        false,
      ],
    ];
    const normalized = (text: string) =>
      text
        .replace(/"taskId":"[^"]+"/g, '"taskId":"<id>"')
        .replace(/"(createdAt|lastUpdatedAt)":"[^"]+"/g, '"$1":"<time>"');
    const taskIdOf = (text: string) => /"taskId":"([^"]+)"/.exec(text)?.[1];
    const hank = ownerFromHeader(new Request(url, { headers }));
    for (const [label, body, extra] of cases.filter(([, , , direct]) => !direct)) {
      const answer = await legacy.answerDirect({
        headers: new Headers({ ...headers, ...extra }),
        owner: ownerFromHeader(new Request(url, { headers: { ...headers, ...extra } })),
        parsedBody: body,
      });
      expect(answer, label).toBeUndefined();
    }
    for (const [label, body, extra] of cases.filter(([, , , direct]) => direct)) {
      const through = await post(body, extra);
      const throughText = await through.text();
      const direct = await legacy.answerDirect({
        headers: new Headers({ ...headers, ...extra }),
        owner: hank,
        parsedBody: body,
      });
      expect(direct, label).toBeDefined();
      if (direct === undefined) continue;
      expect(direct.status, label).toBe(through.status);
      expect(normalized(direct.body), label).toBe(normalized(throughText));
      for (const name of ["content-type", "cache-control", "mcp-session-id"]) {
        const value = Object.entries(direct.headers).find(([k]) => k.toLowerCase() === name)?.[1];
        expect(value, `${label} ${name}`).toBe(through.headers.get(name));
      }
      const a = taskIdOf(direct.body);
      const b = taskIdOf(throughText);
      expect(a === undefined, `${label}: a task in one answer only`).toBe(b === undefined);
      if (a !== undefined && b !== undefined) {
        const creation = async (taskId: string) => {
          const { owner, era, request, ttlMs, pollIntervalMs, traceContext } = await service.get(
            hank,
            taskId,
          );
          return { owner, era, request, ttlMs, pollIntervalMs, traceContext };
        };
        expect(await creation(a), `${label}: stored task`).toEqual(await creation(b));
      }
    }
  });

  it("follows a task created on the lean path: its status reaches the session's stream", async () => {
    const headers = await openSession(url, "iris");
    const reader = await openStream(url, headers);
    const gate = new Gate();
    gates.set("notify", gate);
    const answer = await legacy.answerDirect({
      headers: new Headers(headers),
      owner: ownerFromHeader(new Request(url, { headers })),
      parsedBody: {
        jsonrpc: "2.0",
        id: 1,
        method: "tools/call",
        params: { name: "slow_echo", arguments: { gate: "notify" }, task: {} },
      },
    });
    const taskId = /"taskId":"([^"]+)"/.exec(answer?.body ?? "")?.[1] as string;
    expect(taskId).toBeTruthy();
    gate.open();
    const seen = await readUntilCompleted(reader);
    expect(seen).toContain('"method":"notifications/tasks/status"');
    expect(seen).toContain(`"taskId":"${taskId}"`);
  });

  it("closes sessions idle past the timeout, and only those", async () => {
    const idle = await initialize("erin");
    clock.advance(30_000);
    const active = await initialize("erin");
    clock.advance(30_000);
    const before = legacy.sessionCount;
    const closed = await legacy.closeIdleSessions();
    expect(closed).toBeGreaterThanOrEqual(1);
    expect(legacy.sessionCount).toBe(before - closed);
    expect((await list(idle, "erin")).status).toBe(404);
    expect((await list(active, "erin")).status).toBe(200);
  });
});

describe("a session's tools/call refused by the store's quota", () => {
  it("is answered on the lean path exactly as through the transport", async () => {
    const s = stack(new MemoryTaskStore({ sweepIntervalMs: 0, maxTasksPerOwner: 1 }));
    const legacy = createLegacyHandler({
      service: s.service,
      runner: s.runner,
      tools: s.tools,
      ownerOf: ownerFromHeader,
      serverInfo: { name: "quota", version: "0.0.0" },
      onError: () => {},
    });
    const http = createServer(toNodeHandler(legacy) as RequestListener);
    await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
    onTestFinished(async () => {
      s.gates.get("quota")?.open();
      await legacy.close();
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    });
    s.gates.set("quota", new Gate());
    const url = `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`;
    const headers = await openSession(url, "jo");
    const body = {
      jsonrpc: "2.0",
      id: 3,
      method: "tools/call",
      params: { name: "slow_echo", arguments: { gate: "quota" }, task: {} },
    };
    const post = () => fetch(url, { method: "POST", headers, body: JSON.stringify(body) });
    expect(await (await post()).text()).toContain('"taskId"');
    const through = await post();
    const direct = await legacy.answerDirect({
      headers: new Headers(headers),
      owner: ownerFromHeader(new Request(url, { headers })),
      parsedBody: body,
    });
    const text = await through.text();
    expect(text).toContain('"reason":"store_full"');
    expect(direct?.status).toBe(through.status);
    expect(direct?.body).toBe(text);
  });
});

describe("a session's notifier of a task the session created", () => {
  /** A memory store that counts, per task, its reads and its live change-feed watches. */
  function countingStore() {
    const inner = new MemoryTaskStore({ sweepIntervalMs: 0 });
    const reads = new Map<string, number>();
    const watching = new Map<string, number>();
    const bump = (counts: Map<string, number>, taskId: string, by: number) =>
      counts.set(taskId, (counts.get(taskId) ?? 0) + by);
    const store = new Proxy(inner, {
      get(target, key) {
        if (key === "get") {
          return (taskId: string, scope: Parameters<TaskStore["get"]>[1]) => {
            bump(reads, taskId, 1);
            return target.get(taskId, scope);
          };
        }
        if (key === "watch") {
          return (listener: Parameters<TaskStore["watch"]>[0], taskId?: string) => {
            const unwatch = target.watch(listener, taskId);
            if (taskId === undefined) return unwatch;
            bump(watching, taskId, 1);
            let once = true;
            return () => {
              if (once) bump(watching, taskId, -1);
              once = false;
              unwatch();
            };
          };
        }
        const value = Reflect.get(target, key, target);
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
    return { store: store as TaskStore, reads, watching };
  }

  async function createTask(url: URL, headers: Record<string, string>, gate: string) {
    const response = await fetch(url, {
      method: "POST",
      headers,
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "tools/call",
        params: { name: "slow_echo", arguments: { gate }, task: {} },
      }),
    });
    const taskId = /"taskId":"([^"]+)"/.exec(await response.text())?.[1];
    if (taskId === undefined) throw new Error("no task created");
    return taskId;
  }

  /** A task held at a gate, created by a session that listens on no stream. */
  async function quietTask() {
    const { store, reads, watching } = countingStore();
    const s = stack(store);
    const server = await startServer(s);
    onTestFinished(() => server.close());
    const headers = await openSession(server.url, "ivy");
    const gate = new Gate();
    s.gates.set("quiet", gate);
    const taskId = await createTask(server.url, headers, "quiet");
    return { s, server, headers, gate, taskId, reads, watching };
  }

  it("does not read a task that ends within a second while the session listens on no stream, and still ends with it", async () => {
    const { s, server, headers, gate, taskId, reads, watching } = await quietTask();
    gate.open();
    // The run and the notifier both stop watching once the task has ended.
    await vi.waitFor(() => expect(watching.get(taskId)).toBe(0));
    // Past the notifier's first check: it was dropped with the notifier.
    await sleep(1_200);
    expect(reads.get(taskId)).toBeUndefined();
    const owner = ownerFromHeader(new Request(server.url, { headers }));
    expect((await s.service.get(owner, taskId)).status).toBe("completed");
  });

  it("reads a task still running a second later once while the session listens on no stream, and still ends with it", async () => {
    const { gate, taskId, reads, watching } = await quietTask();
    await vi.waitFor(() => expect(reads.get(taskId)).toBe(1), { timeout: 3_000 });
    gate.open();
    await vi.waitFor(() => expect(watching.get(taskId)).toBe(0));
    expect(reads.get(taskId)).toBe(1);
  });

  /** A notifier of alice's session on `s` for her working task `taskId` (no standalone stream). */
  function notifierOf(
    s: ReturnType<typeof stack>,
    taskId: string,
    options: { listening: boolean; onEnd: () => void; firstCheckMs?: number },
  ): TaskNotifier {
    return new TaskNotifier(
      {
        deps: { service: s.service, runner: s.runner, registry: new InputRegistry() },
        owner: alice,
        notify: () => {},
        listening: () => options.listening,
        standaloneChannel: () => undefined,
        reportError: (error) => {
          throw error;
        },
      },
      { taskId, status: "working" },
      undefined,
      options.onEnd,
      options.firstCheckMs,
    );
  }

  it("a notifier whose task ended before it watched ends at its first check", async () => {
    const s = stack(new MemoryTaskStore({ sweepIntervalMs: 0 }));
    s.runner.register(s.tools);
    const task = await s.runner.start(alice, {
      era: "2025-11-25",
      request: { toolName: "slow_echo", arguments: { text: "done", ms: 0 } },
    });
    await s.service.waitFor(alice, task.taskId, (t) => isTerminal(t.status));
    let ended = false;
    notifierOf(s, task.taskId, {
      listening: false,
      onEnd: () => {
        ended = true;
      },
      firstCheckMs: 10,
    });
    // No change is coming: only the first check can end it (the rechecks are 30 s apart).
    await vi.waitFor(() => expect(ended).toBe(true));
  });

  it("stop ends a notifier, following or quiet, once: it stops watching its running task", async () => {
    const { store, watching } = countingStore();
    const s = stack(store);
    s.runner.register(s.tools);
    const task = await s.runner.start(alice, {
      era: "2025-11-25",
      request: { toolName: "slow_echo", arguments: { text: "long", ms: 60_000 } },
    });
    onTestFinished(() => s.service.cancelNow(alice, task.taskId).then(() => {}));
    const byRun = watching.get(task.taskId) ?? 0;
    for (const listening of [true, false]) {
      let ends = 0;
      const notifier = notifierOf(s, task.taskId, {
        listening,
        onEnd: () => {
          ends += 1;
        },
      });
      expect(watching.get(task.taskId)).toBe(byRun + 1);
      notifier.stop();
      await vi.waitFor(() => expect(ends).toBe(1));
      notifier.stop();
      await sleep(20);
      expect(ends, listening ? "following" : "quiet").toBe(1);
      expect(watching.get(task.taskId)).toBe(byRun);
    }
  });

  it("follows the task once a stream opens after the task was created", async () => {
    const { store } = countingStore();
    const s = stack(store);
    const server = await startServer(s);
    onTestFinished(() => server.close());
    const headers = await openSession(server.url, "jay");
    const gate = new Gate();
    s.gates.set("heard", gate);
    const taskId = await createTask(server.url, headers, "heard");
    const reader = await openStream(server.url, headers);
    gate.open();
    const seen = await readUntilCompleted(reader);
    expect(seen).toContain('"method":"notifications/tasks/status"');
    expect(seen).toContain(`"taskId":"${taskId}"`);
  });
});
