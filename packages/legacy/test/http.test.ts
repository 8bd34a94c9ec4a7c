import { createServer, type RequestListener } from "node:http";
import type { AddressInfo } from "node:net";
import { ManualClock } from "@mcp-tasks/core";
import { toNodeHandler } from "@modelcontextprotocol/node";
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from "vitest";
import { createLegacyHandler, type LegacyHandler } from "../src/index.js";
import { Gate, memoryStore, ownerFromHeader, type StoreFixture, stack } from "./fixtures.js";

const HEADERS = {
  "content-type": "application/json",
  accept: "application/json, text/event-stream",
};

describe("createLegacyHandler sessions", () => {
  let fixture: StoreFixture;
  let legacy: LegacyHandler;
  let url: URL;
  let close: () => Promise<void>;
  const clock = new ManualClock(1_000_000);
  let gates: Map<string, Gate>;

  beforeAll(async () => {
    fixture = await memoryStore.create();
    const s = stack(fixture.store);
    gates = s.gates;
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
    const response = await fetch(url, {
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
