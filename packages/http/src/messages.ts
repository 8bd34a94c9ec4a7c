/** A JSON object, or `undefined`. */
function record(value: unknown): Record<string, unknown> | undefined {
  return typeof value === "object" && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}

/** The JSON-RPC messages of a body: the batch's, or the one message. */
function messagesOf(body: unknown): readonly unknown[] {
  return Array.isArray(body) ? body : body === undefined ? [] : [body];
}

/** `params.clientInfo.name` when the body is a 2025-11-25 `initialize` request. */
export function initializeClientName(body: unknown): string | undefined {
  const message = record(body);
  if (message?.method !== "initialize") return undefined;
  const name = record(record(message.params)?.clientInfo)?.name;
  return typeof name === "string" ? name : undefined;
}

/** The id of a body that is one JSON-RPC request (not a batch, not a notification). */
export function requestIdOf(body: unknown): string | number | undefined {
  const message = record(body);
  const id = message?.id;
  return typeof message?.method === "string" && (typeof id === "string" || typeof id === "number")
    ? id
    : undefined;
}

/** How many of the body's messages call `method`. */
export function countMethod(body: unknown, method: string): number {
  return messagesOf(body).filter((m) => record(m)?.method === method).length;
}

/**
 * The distinct task ids a `subscriptions/listen` body asks to follow
 * (`params.notifications.taskIds`), or `undefined` when it is no such request.
 */
export function listenTaskCount(body: unknown): number | undefined {
  const message = record(body);
  if (message?.method !== "subscriptions/listen") return undefined;
  const ids = record(record(message.params)?.notifications)?.taskIds;
  return Array.isArray(ids) ? new Set(ids).size : undefined;
}
