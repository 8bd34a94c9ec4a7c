// The requests both HTTP benchmarks send: 2026-07-28 headers and envelope, a POST that
// reads a JSON or SSE answer, and a 2025-11-25 session.
const EXT = "io.modelcontextprotocol/tasks";

/** The 2026-07-28 request headers for `method` (and its `Mcp-Name`). */
export function modernHeaders(method, name) {
  return {
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
    "mcp-protocol-version": "2026-07-28",
    "mcp-method": method,
    ...(name !== undefined && { "mcp-name": name }),
  };
}

/** A 2026-07-28 request with the envelope (tasks extension declared). */
export function modernBody(method, params, id = 1) {
  return {
    jsonrpc: "2.0",
    id,
    method,
    params: {
      ...params,
      _meta: {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": { extensions: { [EXT]: {} } },
        "io.modelcontextprotocol/clientInfo": { name: "bench", version: "1.0.0" },
      },
    },
  };
}

/** POSTs `body`; the answer parsed from JSON or from the first SSE `data:` line. */
export async function post(url, headers, body) {
  const response = await fetch(url, { method: "POST", headers, body: JSON.stringify(body) });
  const text = await response.text();
  const data = text.split("\n").find((line) => line.startsWith("data:"));
  const parsed = data ? JSON.parse(data.slice(5)) : text ? JSON.parse(text) : undefined;
  return { response, body: parsed };
}

/** Opens a 2025-11-25 session on `url` as `clientName`: the headers of its requests. */
export async function legacySession(url, clientName) {
  const base = {
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
  };
  const init = await post(url, base, {
    jsonrpc: "2.0",
    id: 1,
    method: "initialize",
    params: {
      protocolVersion: "2025-11-25",
      capabilities: { tasks: {} },
      clientInfo: { name: clientName, version: "1" },
    },
  });
  const session = init.response.headers.get("mcp-session-id");
  if (!session) throw new Error(`no session: ${JSON.stringify(init.body)}`);
  const headers = { ...base, "mcp-session-id": session, "mcp-protocol-version": "2025-11-25" };
  await fetch(url, {
    method: "POST",
    headers,
    body: JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }),
  }).then((r) => r.text());
  return headers;
}
