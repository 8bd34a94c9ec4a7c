// Bodies nested past MAX_JSON_DEPTH are refused with a JSON-RPC error, not a stack overflow
// (a 10 000-deep `_meta` array used to be answered 500).
import { createServer, type Server as HttpServer } from "node:http";
import type { AddressInfo } from "node:net";
import { TaskRunner, TaskService } from "@mcp-tasks/core";
import { MemoryTaskStore } from "@mcp-tasks/store-memory";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createNodeTasksHandler,
  MAX_JSON_DEPTH,
  nestsDeeperThan,
  TasksExtension,
} from "../src/index.js";

const nested = (depth: number, open = "[", close = "]") =>
  `${open.repeat(depth)}${close.repeat(depth)}`;

describe("nestsDeeperThan", () => {
  it("counts arrays and objects, not brackets inside strings", () => {
    expect(nestsDeeperThan(nested(MAX_JSON_DEPTH))).toBe(false);
    expect(nestsDeeperThan(nested(MAX_JSON_DEPTH + 1))).toBe(true);
    expect(nestsDeeperThan(`{"a":${nested(300)}}`, 300)).toBe(true);
    expect(nestsDeeperThan(JSON.stringify({ s: "[".repeat(10_000) }))).toBe(false);
    expect(nestsDeeperThan(JSON.stringify({ s: `\\"${"[".repeat(10_000)}` }))).toBe(false);
    expect(nestsDeeperThan(`[${'{"a":'.repeat(3)}1}}}]`, 3)).toBe(true);
  });
});

describe("a 2026-07-28 request nested 10 000 deep", () => {
  const service = new TaskService({ store: new MemoryTaskStore() });
  const runner = new TaskRunner({ service, tools: [] });
  const handler = createNodeTasksHandler(new TasksExtension({ service, runner, tools: [] }));
  let http: HttpServer;
  beforeAll(async () => {
    http = createServer((req, res) => void handler.handle(req, res));
    await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  });
  afterAll(async () => {
    await handler.close();
    await new Promise((resolve) => http.close(resolve));
  });

  for (const method of ["tools/call", "tools/list", "server/discover", "tasks/get"]) {
    it(`${method}: 400 with -32600, never a 5xx`, async () => {
      const body = `{"jsonrpc":"2.0","id":1,"method":"${method}","params":{"name":"x","taskId":"x","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","deep":${nested(10_000)}}}}`;
      const response = await fetch(`http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          "mcp-protocol-version": "2026-07-28",
          "mcp-method": method,
          "mcp-name": "x",
        },
        body,
      });
      expect(response.status).toBe(400);
      expect(await response.json()).toEqual({
        jsonrpc: "2.0",
        id: null,
        error: {
          code: -32600,
          message: `Invalid Request: JSON nested deeper than ${MAX_JSON_DEPTH} levels`,
        },
      });
    });
  }
});
