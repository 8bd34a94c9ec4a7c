import type { ClusterNode } from "./fault-cluster.js";
import { rpcAnswer } from "./fault-invariants.js";
import type { Era, HistoryOp, SeenTask } from "./history-checker.js";
import { sendRaw } from "./raw-http.js";
import { modernRequest } from "./wire.js";

/**
 * The clients of the history suite: raw HTTP in both eras, each operation recorded with its
 * invoke and complete times and what its answer showed (see `history-checker.ts`).
 */

/** What an answer came to, before it is recorded. */
export interface Answer {
  readonly outcome: HistoryOp["outcome"];
  readonly httpStatus?: number;
  readonly errorCode?: number;
  readonly result?: Record<string, unknown>;
  /** A 2025-11-25 session id the answer gave. */
  readonly session?: string;
}

const LIMITS = { headersMs: 15_000, bodyMs: 15_000 };
let nextId = 1;

function answerOf(outcome: Awaited<ReturnType<typeof sendRaw>>, id: number): Answer {
  if (outcome.kind !== "answer") return { outcome: "no_answer" };
  const { result, error } = rpcAnswer(outcome, id);
  const session = outcome.headers["mcp-session-id"];
  return {
    outcome: result !== undefined ? "ok" : "error",
    httpStatus: outcome.status,
    ...(error !== undefined && { errorCode: error.code }),
    ...(result !== undefined && { result }),
    ...(typeof session === "string" && { session }),
  };
}

/** One 2026-07-28 request to `node` as `token`. */
export async function modernCall(
  node: ClusterNode,
  token: string,
  method: string,
  params: Record<string, unknown>,
): Promise<Answer> {
  const id = nextId++;
  const { headers, body } = modernRequest(id, method, params, { token, clientName: "history" });
  const outcome = await sendRaw(
    node.process.url,
    { method: "POST", path: "/mcp", headers, body: JSON.stringify(body) },
    LIMITS,
  );
  return answerOf(outcome, id);
}

/** One 2025-11-25 request to `node` in `session` (none: `initialize`). */
export async function legacyCall(
  node: ClusterNode,
  token: string,
  session: string | undefined,
  method: string,
  params: unknown,
): Promise<Answer> {
  const id = nextId++;
  const outcome = await sendRaw(
    node.process.url,
    {
      method: "POST",
      path: "/mcp",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        authorization: `Bearer ${token}`,
        ...(session !== undefined && {
          "mcp-session-id": session,
          "mcp-protocol-version": "2025-11-25",
        }),
      },
      body: JSON.stringify({ jsonrpc: "2.0", id, method, params }),
    },
    LIMITS,
  );
  return answerOf(outcome, id);
}

/** Opens a 2025-11-25 session on `node` (initialize, then initialized); undefined if refused. */
export async function openSession(node: ClusterNode, token: string): Promise<string | undefined> {
  const opened = await legacyCall(node, token, undefined, "initialize", {
    protocolVersion: "2025-11-25",
    capabilities: {},
    clientInfo: { name: "history-legacy", version: "1" },
  });
  if (opened.session === undefined || opened.outcome !== "ok") return undefined;
  await legacyCall(node, token, opened.session, "notifications/initialized", undefined);
  return opened.session;
}

/** The task state a task-shaped result shows (a get, a 2025 cancel, a list item). */
export function seenOf(result: unknown): SeenTask | undefined {
  const r = result as Record<string, unknown> | undefined;
  if (typeof r?.taskId !== "string" || typeof r.status !== "string") return undefined;
  const content = (r.result as { content?: Array<{ text?: unknown }> } | undefined)?.content;
  const text = content?.[0]?.text;
  const message = (r.error as { message?: unknown } | undefined)?.message ?? r.statusMessage;
  return {
    taskId: r.taskId,
    status: r.status,
    ...(typeof text === "string" && { text }),
    ...(typeof message === "string" && { message }),
  };
}

/** What one operation becomes in the history. */
export function record(
  base: {
    client: string;
    owner: string;
    era: Era;
    kind: HistoryOp["kind"];
    node: ClusterNode;
    invokeAt: number;
    completeAt: number;
    taskId?: string;
    tool?: string;
    final?: boolean;
  },
  answer: Answer,
  seen: readonly SeenTask[] = [],
): HistoryOp {
  const { node, ...rest } = base;
  return {
    ...rest,
    node: node.name,
    outcome: answer.outcome,
    ...(answer.httpStatus !== undefined && { httpStatus: answer.httpStatus }),
    ...(answer.errorCode !== undefined && { errorCode: answer.errorCode }),
    ...(answer.outcome === "ok" && seen.length > 0 && { seen }),
  };
}
