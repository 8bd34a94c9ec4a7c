/**
 * `@mcp-tasks/http/hono`: the endpoint mounted in Hono (for example on `@hono/node-server`),
 * next to `createMcpHonoApp` of `@modelcontextprotocol/hono`.
 *
 * ```ts
 * const app = createMcpHonoApp();
 * app.all("/mcp", tasksHonoHandler(endpoint, { auth: requireBearerAuth({ verifier }) }));
 * serve({ fetch: app.fetch, port: 3000, hostname: "127.0.0.1" });
 * ```
 *
 * @packageDocumentation
 */
import type { AuthInfo } from "@modelcontextprotocol/server";
import type { TasksEndpoint } from "./endpoint.js";

/**
 * The parts of a Hono `Context` the handler reads (a Hono `Context` is one): the web
 * request and the body `createMcpHonoApp` parsed (`c.get("parsedBody")`).
 */
export interface HonoLikeContext {
  readonly req: { readonly raw: Request };
  get(key: "parsedBody"): unknown;
}

/** Settings of {@link tasksHonoHandler}. */
export interface TasksHonoOptions {
  /**
   * Authenticates the request: `AuthInfo`, `undefined` (no credentials; the endpoint's
   * owner rules decide), or a `Response` to answer instead, e.g. `requireBearerAuth({ verifier })`
   * of `@modelcontextprotocol/server`.
   */
  readonly auth?: (
    request: Request,
  ) => AuthInfo | Response | undefined | Promise<AuthInfo | Response | undefined>;
}

/** A Hono handler serving the endpoint through its web-standard `fetch`. */
export function tasksHonoHandler(
  endpoint: TasksEndpoint,
  options: TasksHonoOptions = {},
): (c: HonoLikeContext) => Promise<Response> {
  return async (c) => {
    const request = c.req.raw;
    const authInfo = options.auth === undefined ? undefined : await options.auth(request);
    if (authInfo instanceof Response) return authInfo;
    const parsedBody = c.get("parsedBody");
    return endpoint.fetch(request, {
      ...(authInfo !== undefined && { authInfo }),
      ...(parsedBody !== undefined && { parsedBody }),
    });
  };
}
