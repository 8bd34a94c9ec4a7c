import { connect } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningServer } from "../src/http-server.js";
import { sendRaw } from "./helpers/raw-http.js";
import { ALICE, startDemo, startDualDemo } from "./helpers/server.js";
import { openLegacySession } from "./helpers/wire.js";

/** Longest the server may take to answer (or open a stream): a hang guard, not a timing. */
const ANSWER_WITHIN_MS = 2_000;

interface RawAnswer {
  status: number;
  head: string;
  body: string;
}

/** Sends raw HTTP/1.1 bytes (any Host, any method) and reads the whole answer. */
function raw(url: string, text: string): Promise<RawAnswer> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    let data = "";
    const guard = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no answer within ${ANSWER_WITHIN_MS} ms:\n${data}`));
    }, ANSWER_WITHIN_MS);
    socket.on("data", (chunk) => {
      data += chunk.toString("latin1");
    });
    socket.on("error", reject);
    socket.on("close", () => {
      clearTimeout(guard);
      const cut = data.indexOf("\r\n\r\n");
      const head = cut < 0 ? data : data.slice(0, cut);
      resolve({
        status: Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1] ?? 0),
        head,
        body: cut < 0 ? "" : data.slice(cut + 4),
      });
    });
    socket.end(text);
  });
}

function request(method: string, host: string, body = "") {
  return (
    `${method} /mcp HTTP/1.1\r\nHost: ${host}\r\nContent-Type: application/json\r\n` +
    `Accept: application/json, text/event-stream\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
    `Connection: close\r\n\r\n${body}`
  );
}

const DISCOVER = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "server/discover", params: {} });

describe("HTTP faults from outside", () => {
  let server: RunningServer;
  let open: RunningServer;
  const logged: string[] = [];

  beforeAll(async () => {
    server = await startDemo({ onError: (error) => logged.push(String(error)) });
    open = await startDemo({ loopbackOnly: false, onError: (error) => logged.push(String(error)) });
  });
  afterAll(async () => {
    await server.stop();
    await open.stop();
  });

  it("answers 400 (logged) for a Host header that forms no URL, before anything else", async () => {
    for (const host of ["a b", "%zz", "localhost:99999", "::1", "user@localhost", "localhost/x"]) {
      for (const target of [server, open]) {
        const before = logged.length;
        const answer = await raw(target.url, request("POST", host, DISCOVER));
        expect(answer.status, `Host: ${host}`).toBe(400);
        const body = JSON.parse(answer.body) as { error: { code: number; message: string } };
        expect(body.error.message).toContain("Invalid Host header");
        expect(logged.slice(before).join("\n")).toContain("Invalid Host header");
      }
    }
  });

  it("answers 403 for a well-formed foreign Host on loopback, and serves it when open", async () => {
    const refused = await raw(server.url, request("POST", "example.com", DISCOVER));
    expect(refused.status).toBe(403);
    expect(logged.join("\n")).toContain("Invalid Host: example.com");
    const served = await raw(
      open.url,
      request("POST", "example.com", DISCOVER).replace(
        "Content-Type: application/json\r\n",
        "Content-Type: application/json\r\nMCP-Protocol-Version: 2026-07-28\r\nMcp-Method: server/discover\r\n",
      ),
    );
    expect(served.status).not.toBeGreaterThanOrEqual(500);
  });

  it("answers a refusal only once a client still sending its body has finished, never mid-body", async () => {
    // Refused before the body is read (a bad Host, a foreign Origin, an unknown token, a body
    // past the limit): the rest is drained before the answer, which closes the connection.
    // Answered mid-body, a client still writing gets a reset (EPIPE) and often never the answer.
    const { port } = new URL(server.url);
    const cases: [string, Record<string, string>, number][] = [
      ["bad Host", { host: "a b" }, 400],
      ["foreign Host", { host: "evil.example" }, 403],
      ["foreign Origin", { origin: "http://evil.example" }, 403],
      ["unknown token", { authorization: "Bearer not-a-known-token" }, 401],
      ["too large", { authorization: `Bearer ${ALICE}` }, 413],
    ];
    const body = JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "ping",
      pad: "y".repeat(1_200_000),
    });
    for (const [name, headers, status] of cases) {
      const outcome = await sendRaw(
        server.url,
        {
          method: "POST",
          path: "/mcp",
          headers: {
            host: `127.0.0.1:${port}`,
            "content-type": "application/json",
            accept: "application/json, text/event-stream",
            "mcp-protocol-version": "2026-07-28",
            ...headers,
          },
          body,
        },
        { splitBodyMs: 150 },
      );
      expect(outcome, name).toMatchObject({ kind: "answer", status, answeredMidBody: false });
    }
  });

  it("answers 405 with Allow for TRACE and other unsupported methods", async () => {
    const { port } = new URL(server.url);
    for (const method of ["TRACE", "PUT", "PATCH", "OPTIONS", "HEAD"]) {
      const answer = await raw(server.url, request(method, `127.0.0.1:${port}`));
      expect(answer.status, method).toBe(405);
      expect(answer.head, method).toMatch(/\r\nAllow: GET, POST, DELETE/i);
    }
  });
});

describe("2025-11-25 GET stream", () => {
  let server: RunningServer;
  beforeAll(async () => {
    server = await startDualDemo();
  });
  afterAll(async () => {
    await server.stop();
  });

  it("sends its headers and an SSE comment at once on a valid session", async () => {
    const session = await openLegacySession(server.url, ALICE, "stream-test");
    expect(session).toBeTruthy();
    const headers = {
      authorization: `Bearer ${ALICE}`,
      "mcp-session-id": session as string,
      "mcp-protocol-version": "2025-11-25",
    };
    await fetch(server.url, {
      method: "POST",
      headers: {
        ...headers,
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
      },
      body: JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }),
    }).then((r) => r.text());
    const controller = new AbortController();
    const guard = setTimeout(() => controller.abort(), ANSWER_WITHIN_MS);
    try {
      const stream = await fetch(server.url, {
        method: "GET",
        headers: { ...headers, accept: "text/event-stream" },
        signal: controller.signal,
      });
      expect(stream.status).toBe(200);
      expect(stream.headers.get("content-type")).toContain("text/event-stream");
      const reader = (stream.body as ReadableStream<Uint8Array>).getReader();
      const first = await reader.read();
      expect(new TextDecoder().decode(first.value).startsWith(":")).toBe(true);
      await reader.cancel();
    } finally {
      clearTimeout(guard);
      controller.abort();
    }
  });
});
