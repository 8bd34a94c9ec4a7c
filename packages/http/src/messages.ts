/** A JSON object, or `undefined`. */
function record(value: unknown): Record<string, unknown> | undefined {
  return typeof value === "object" && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}

/** `params.clientInfo.name` when the body is a 2025-11-25 `initialize` request. */
export function initializeClientName(body: unknown): string | undefined {
  const message = record(body);
  if (message?.method !== "initialize") return undefined;
  const name = record(record(message.params)?.clientInfo)?.name;
  return typeof name === "string" ? name : undefined;
}
