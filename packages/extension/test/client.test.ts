// `@mcp-tasks/extension/client`: the real ext-tasks client (with @modelcontextprotocol/client)
// drives a real tasks server over HTTP on 127.0.0.1 through `createRawDispatch`.
import { readFileSync } from "node:fs";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import type { Owner } from "@mcp-tasks/core";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import {
  createApplicationInputHandler,
  createTaskSessionFromClient,
  type RawClientDispatch,
} from "@modelcontextprotocol/ext-tasks/client";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  createRawDispatch,
  encodeRoutingHeader,
  type RawDispatch,
  RawDispatchHttpError,
} from "../src/client/index.js";
import {
  createNodeTasksHandler,
  decodeRoutingHeader,
  type NodeTasksHandler,
} from "../src/index.js";
import { ALICE, BOB, type Harness, harness, WITH_EXT } from "./fixtures.js";

const TOKENS: Record<string, Owner> = { "alice-token": ALICE, "bob-token": BOB };
const clientInfo = { name: "raw-dispatch-test", version: "1.0.0" };
const framing = { protocolVersion: "2026-07-28", clientInfo, clientCapabilities: {} };

// The export is what ext-tasks asks for, by its own type.
const assignable: (dispatch: RawDispatch) => RawClientDispatch = (dispatch) => dispatch;

/** A 2026-07-28 request as ext-tasks frames it before calling the dispatch. */
const framed = (method: string, params: Record<string, unknown>) => ({
  jsonrpc: "2.0",
  id: 0,
  method,
  params: {
    ...params,
    _meta: {
      "io.modelcontextprotocol/protocolVersion": "2026-07-28",
      "io.modelcontextprotocol/clientInfo": clientInfo,
      "io.modelcontextprotocol/clientCapabilities": WITH_EXT,
    },
  },
});

describe("createRawDispatch with the ext-tasks client", () => {
  let h: Harness;
  let handler: NodeTasksHandler;
  let server: Server;
  let url: string;
  const open: { close(): Promise<void> }[] = [];

  beforeEach(async () => {
    h = await harness();
    handler = createNodeTasksHandler(h.ext, { serverInfo: { name: "client-test", version: "1" } });
    // Bearer auth in front of the handler, as a real deployment has.
    server = createServer((req, res) => {
      const token = /^Bearer (.+)$/.exec(req.headers.authorization ?? "")?.[1];
      const owner = token === undefined ? undefined : TOKENS[token];
      if (owner === undefined) {
        res.writeHead(401, { "www-authenticate": "Bearer" }).end();
        return;
      }
      void handler.handle(req, res, { owner });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
  });
  afterEach(async () => {
    for (const item of open.splice(0).reverse()) await item.close();
    await handler.close();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await h.close();
  });

  async function session(rawDispatch: RawDispatch, connectToken = "alice-token") {
    const client = new Client(clientInfo, {
      capabilities: { elicitation: { form: {} } },
      versionNegotiation: { mode: "auto" },
    });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(url), {
        requestInit: { headers: { authorization: `Bearer ${connectToken}` } },
      }),
    );
    open.push(client);
    const tasks = createTaskSessionFromClient(client, {
      endpointId: "raw-dispatch-test",
      rawDispatch: assignable(rawDispatch),
      v2RequestFraming: { ...framing, clientCapabilities: { elicitation: { form: {} } } },
      onInputRequest: createApplicationInputHandler({
        elicitation: async (request) => ({
          action: "accept",
          content: { answer: String(request.params.message) },
        }),
        sampling: async () => {
          throw new Error("no sampling here");
        },
        roots: async () => ({ roots: [] }),
      }),
    });
    open.push(tasks);
    expect(client.getProtocolEra()).toBe("modern");
    return tasks;
  }

  it("runs a task to its result with a bearer token, and the task is the token's owner's", async () => {
    const tasks = await session(createRawDispatch({ url, token: "alice-token" }));
    const execution = await tasks.callTool("work", {});
    expect(execution.kind).toBe("task");
    const { outcome } = await execution.settle();
    expect(outcome.status).toBe("completed");
    if (outcome.status !== "completed") return;
    expect(outcome.result.content).toEqual([{ type: "text", text: "worked" }]);

    const taskId = execution.kind === "task" ? String(execution.handle.taskId) : "";
    expect((await h.service.get(ALICE, taskId)).status).toBe("completed");
    // Bob, through the same export, is told the task does not exist.
    const asBob = createRawDispatch({ url, token: async () => "bob-token" });
    const answer = await asBob(framed("tasks/get", { taskId }) as never);
    expect(answer).toMatchObject({ kind: "error", error: { code: -32602 } });
  });

  it("answers input requests through tasks/update", async () => {
    const tasks = await session(createRawDispatch({ url, token: "alice-token" }));
    const execution = await tasks.callTool("ask", {});
    const { outcome } = await execution.settle();
    expect(outcome.status).toBe("completed");
    if (outcome.status !== "completed") return;
    const [block] = outcome.result.content as [{ text: string }];
    expect(JSON.parse(block.text)).toEqual({
      first: { action: "accept", content: { answer: "1?" } },
      second: { action: "accept", content: { answer: "2?" } },
    });
  });

  it("sends arbitrary headers; a call's own headers win, and its Mcp-Name cannot break routing", async () => {
    // Default headers say Bob; the call's own headers say Alice, with a stale Mcp-Name in
    // another case (sent as is, it would be a second value and a -32020).
    const tasks = await session(
      createRawDispatch({ url, headers: () => ({ Authorization: "Bearer bob-token" }) }),
    );
    const execution = await tasks.callTool(
      "work",
      {},
      { headers: { authorization: "Bearer alice-token", "mcp-name": "stale" } },
    );
    const { outcome } = await execution.settle();
    expect(outcome.status).toBe("completed");
    const taskId = execution.kind === "task" ? String(execution.handle.taskId) : "";
    expect((await h.service.get(ALICE, taskId)).status).toBe("completed");
  });

  it("rejects with the HTTP status when the answer is not JSON-RPC (a bare 401)", async () => {
    const dispatch = createRawDispatch({ url });
    const failure = await dispatch(framed("tasks/get", { taskId: "t" }) as never).catch(
      (error: unknown) => error,
    );
    expect(failure).toBeInstanceOf(RawDispatchHttpError);
    expect((failure as RawDispatchHttpError).status).toBe(401);
    expect((failure as RawDispatchHttpError).headers.get("www-authenticate")).toBe("Bearer");
  });

  it("aborts with the caller's signal and with the call's requestTimeoutMs", async () => {
    const dispatch = createRawDispatch({ url, token: "alice-token" });
    const request = framed("tasks/get", { taskId: "t" }) as never;
    await expect(dispatch(request, { signal: AbortSignal.abort() })).rejects.toThrow();
    // A fetch that never answers, bounded by the call's timeout.
    const hanging = createRawDispatch({
      url,
      fetch: (_input, init) =>
        new Promise((_resolve, reject) =>
          init?.signal?.addEventListener("abort", () => reject(init.signal?.reason)),
        ),
    });
    await expect(hanging(request, { context: { requestTimeoutMs: 50 } })).rejects.toThrow(
      /timeout|abort/i,
    );
  });
});

describe("createRawDispatch reading an SSE answer", () => {
  let server: Server;
  let url: string;
  const seen: Record<string, string | undefined>[] = [];

  beforeEach(async () => {
    // Sends a notification first, then the answer, and keeps the stream open.
    server = createServer((req: IncomingMessage, res: ServerResponse) => {
      let body = "";
      req.on("data", (chunk) => (body += chunk));
      req.on("end", () => {
        const { id } = JSON.parse(body) as { id: number };
        seen.push({
          name: req.headers["mcp-name"] as string | undefined,
          method: req.headers["mcp-method"] as string | undefined,
          version: req.headers["mcp-protocol-version"] as string | undefined,
        });
        res.writeHead(200, { "content-type": "text/event-stream" });
        res.write(': comment\n\nevent: message\ndata: {"jsonrpc":"2.0","method":"n"}\n\n');
        res.write(`data: {"jsonrpc":"2.0","id":${id},\ndata: "result":{"ok":true}}\n\n`);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
  });
  afterEach(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it("resolves at the response to its request without waiting for the stream to end", async () => {
    const dispatch = createRawDispatch({ url });
    const answer = await dispatch(framed("tools/call", { name: "café", arguments: {} }) as never);
    expect(answer).toEqual({ kind: "result", result: { ok: true } });
    expect(seen.at(-1)).toEqual({
      name: encodeRoutingHeader("café"),
      method: "tools/call",
      version: "2026-07-28",
    });
  });
});

describe("encodeRoutingHeader", () => {
  it("leaves plain ASCII alone and base64-wraps what a header cannot carry, as the server decodes it", () => {
    expect(encodeRoutingHeader("slow_add")).toBe("slow_add");
    for (const value of ["café", " padded ", "", "=?base64?abc?=", "line\nbreak", "工具"]) {
      const encoded = encodeRoutingHeader(value);
      expect(encoded).toMatch(/^=\?base64\?[A-Za-z0-9+/=]*\?=$/);
      expect(decodeRoutingHeader(encoded)).toBe(value);
    }
  });
});

describe("the client entry stays out of server code", () => {
  it("imports only its own files and the constants, and no package", () => {
    const dist = fileURLToPath(new URL("../dist/", import.meta.url));
    const seenFiles = new Set<string>();
    const pending = [join(dist, "client/index.js")];
    for (let file = pending.pop(); file !== undefined; file = pending.pop()) {
      if (seenFiles.has(file)) continue;
      seenFiles.add(file);
      const code = readFileSync(file, "utf8");
      for (const [, specifier] of code.matchAll(/(?:from|import)\s*\(?\s*"([^"]+)"/g)) {
        expect(specifier, `${relative(dist, file)} imports ${specifier}`).toMatch(/^\.\.?\//);
        pending.push(join(dirname(file), specifier ?? ""));
      }
    }
    expect([...seenFiles].map((file) => relative(dist, file)).sort()).toEqual([
      "client/index.js",
      "client/raw-dispatch.js",
      "client/response.js",
      "client/routing-header.js",
      "constants.js",
    ]);
  });
});
