import type { OwnerResolution, RequestHead } from "@mcp-tasks/http";

/** What an {@link OwnerResolver} decides about one HTTP request (`@mcp-tasks/http`'s type). */
export type { OwnerResolution };

/**
 * Turns an HTTP request into the owner every store call of that request is made as. It runs
 * once per request, before any MCP handling; a `reject` is answered with the HTTP status.
 */
export interface OwnerResolver {
  resolve(request: RequestHead): Promise<OwnerResolution>;
}

/** The bearer token of an `Authorization` header; `undefined` without one; `null` if malformed. */
export function bearerToken(request: RequestHead): string | null | undefined {
  const header = request.headers.get("authorization");
  if (header === null) return undefined;
  const match = /^Bearer[ ]+([\x21-\x7e]+)\s*$/i.exec(header);
  return match ? (match[1] ?? null) : null;
}

/** The resolver that makes every caller anonymous. */
export const anonymousResolver: OwnerResolver = {
  resolve: async () => ({ kind: "anonymous" }),
};
