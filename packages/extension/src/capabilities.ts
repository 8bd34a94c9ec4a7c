import { TASKS_EXTENSION_ID } from "./constants.js";

/**
 * True when the client capabilities carried by *this* request declare the tasks extension
 * (`extensions["io.modelcontextprotocol/tasks"]` is an object). Nothing is remembered
 * between requests: a server must not infer capabilities from earlier requests.
 */
export function declaresTasksExtension(clientCapabilities: unknown): boolean {
  if (typeof clientCapabilities !== "object" || clientCapabilities === null) return false;
  const extensions = (clientCapabilities as { extensions?: unknown }).extensions;
  if (typeof extensions !== "object" || extensions === null) return false;
  const value = (extensions as Record<string, unknown>)[TASKS_EXTENSION_ID];
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The server capabilities this facade advertises in `server/discover`: exactly `{}`. */
export function tasksServerCapabilities(): { extensions: Record<string, Record<string, never>> } {
  return { extensions: { [TASKS_EXTENSION_ID]: {} } };
}
