/** Minimal JSON-RPC over HTTP, for wire-level tests (2026-07-28, and a 2025-11-25 opener). */

export const EXT = "io.modelcontextprotocol/tasks";
export const WITH_EXT = { extensions: { [EXT]: {} } };

let nextId = 1;

/** The `initialize` request a 2025-11-25 client opens its session with. */
export function legacyInitialize(clientName: string) {
  return {
    jsonrpc: "2.0",
    id: 1,
    method: "initialize",
    params: {
      protocolVersion: "2025-11-25",
      capabilities: {},
      clientInfo: { name: clientName, version: "1" },
    },
  };
}

/** Opens a 2025-11-25 session as `token` (a bare `initialize`); resolves with its id. */
export async function openLegacySession(
  url: string,
  token: string,
  clientName: string,
): Promise<string> {
  const response = await fetch(url, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      authorization: `Bearer ${token}`,
    },
    body: JSON.stringify(legacyInitialize(clientName)),
  });
  const sessionId = response.headers.get("mcp-session-id");
  await response.body?.cancel();
  if (sessionId === null) throw new Error(`no session (HTTP ${response.status})`);
  return sessionId;
}

export interface WireResponse {
  status: number;
  body:
    | {
        id?: unknown;
        result?: Record<string, unknown>;
        error?: { code: number; message: string; data?: unknown };
      }
    | undefined;
  events: unknown[];
  headers: Headers;
}

/** Reads a JSON or SSE response; for SSE, returns the message answering `id`. */
export async function readResponse(response: Response, id?: unknown): Promise<WireResponse> {
  const type = response.headers.get("content-type") ?? "";
  const text = await response.text();
  if (type.includes("text/event-stream")) {
    const events = text
      .split(/\r?\n/)
      .filter((line) => line.startsWith("data:"))
      .map((line) => JSON.parse(line.slice(5).trim()) as Record<string, unknown>);
    const body = events.find((e) => "id" in e && e.id === id) as WireResponse["body"];
    return { status: response.status, body, events, headers: response.headers };
  }
  let body: WireResponse["body"];
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    body = undefined;
  }
  return { status: response.status, body, events: [], headers: response.headers };
}

/** Routing header value for a request, as a 2026 client sends it. */
export function nameHeader(method: string, params: Record<string, unknown>): string | undefined {
  if (method === "tools/call" || method === "prompts/get") return params.name as string;
  if (method === "resources/read") return params.uri as string;
  if (method.startsWith("tasks/")) return params.taskId as string | undefined;
  return undefined;
}

/** Who sends a 2026-07-28 request, and how. */
export interface ModernRequestOptions {
  token?: string;
  capabilities?: Record<string, unknown>;
  headers?: Record<string, string>;
  /** `clientInfo.name` in the envelope; default `wire-test`. */
  clientName?: string;
}

/** A 2026-07-28 request: its standard headers and its body with the envelope. */
export function modernRequest(
  id: number,
  method: string,
  params: Record<string, unknown> = {},
  options: ModernRequestOptions = {},
): { headers: Record<string, string>; body: Record<string, unknown> } {
  const headers: Record<string, string> = {
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
    "mcp-protocol-version": "2026-07-28",
    "mcp-method": method,
  };
  const name = nameHeader(method, params);
  if (name !== undefined) headers["mcp-name"] = name;
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  Object.assign(headers, options.headers);
  const body = {
    jsonrpc: "2.0",
    id,
    method,
    params: {
      ...params,
      _meta: {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": options.capabilities ?? WITH_EXT,
        "io.modelcontextprotocol/clientInfo": {
          name: options.clientName ?? "wire-test",
          version: "1.0.0",
        },
        ...(params._meta as Record<string, unknown> | undefined),
      },
    },
  };
  return { headers, body };
}

/** Sends one 2026-07-28 request with the envelope and standard headers. */
export async function rpc(
  url: string,
  method: string,
  params: Record<string, unknown> = {},
  options: ModernRequestOptions = {},
): Promise<WireResponse> {
  const id = nextId++;
  const { headers, body } = modernRequest(id, method, params, options);
  const response = await fetch(url, { method: "POST", headers, body: JSON.stringify(body) });
  return readResponse(response, id);
}

/** Polls `tasks/get` until `done` holds (bounded). */
export async function pollTask(
  url: string,
  taskId: string,
  token: string,
  done: (task: Record<string, unknown>) => boolean = (t) =>
    ["completed", "failed", "cancelled"].includes(String(t.status)),
  maxPolls = 400,
): Promise<Record<string, unknown>> {
  for (let i = 0; i < maxPolls; i++) {
    const { body } = await rpc(url, "tasks/get", { taskId }, { token });
    const task = body?.result;
    if (!task) throw new Error(`tasks/get failed: ${JSON.stringify(body)}`);
    if (done(task)) return task;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`task ${taskId} did not settle`);
}
