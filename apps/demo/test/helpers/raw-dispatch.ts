import type { RawClientDispatch } from "@modelcontextprotocol/ext-tasks/client";
import { readResponse } from "./wire.js";

let nextId = 1;

/**
 * The host side of ext-tasks' 2026-07-28 path: frames the request as JSON-RPC, POSTs it
 * with `MCP-Protocol-Version`, `Mcp-Method` and `Mcp-Name`, and parses a JSON or SSE answer.
 */
export function rawDispatch(url: string, token: string): RawClientDispatch {
  return async (request, options) => {
    const { method, params } = request as { method: string; params?: Record<string, unknown> };
    const id = nextId++;
    const headers: Record<string, string> = {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": "2026-07-28",
      "mcp-method": method,
      authorization: `Bearer ${token}`,
      ...options?.context?.headers,
    };
    if (method === "tools/call" && typeof params?.name === "string")
      headers["mcp-name"] = params.name;
    const response = await fetch(url, {
      method: "POST",
      headers,
      body: JSON.stringify({ jsonrpc: "2.0", id, method, params }),
      ...(options?.signal && { signal: options.signal }),
    });
    const message = (await readResponse(response, id)).body;
    if (message?.error) return { kind: "error", error: message.error } as never;
    return { kind: "result", result: message?.result } as never;
  };
}
