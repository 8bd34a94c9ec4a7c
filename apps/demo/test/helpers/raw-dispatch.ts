import type { RawClientDispatch } from "@modelcontextprotocol/ext-tasks/client";

let nextId = 1;

function parseSse(text: string, id: number): unknown {
  for (const line of text.split(/\r?\n/)) {
    if (!line.startsWith("data:")) continue;
    const message = JSON.parse(line.slice(5).trim()) as { id?: unknown };
    if (message.id === id) return message;
  }
  return undefined;
}

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
    const text = await response.text();
    const message = (
      (response.headers.get("content-type") ?? "").includes("text/event-stream")
        ? parseSse(text, id)
        : JSON.parse(text)
    ) as { result?: unknown; error?: { code: number; message: string; data?: unknown } };
    if (message?.error) return { kind: "error", error: message.error } as never;
    return { kind: "result", result: message?.result } as never;
  };
}
