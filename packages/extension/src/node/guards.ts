import type { IncomingHttpHeaders } from "node:http";

/** A JSON object (not `null`, not an array). */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** A header sent once; a repeated header (an array) counts as absent. */
export function single(value: IncomingHttpHeaders[string]): string | undefined {
  return typeof value === "string" ? value : undefined;
}
