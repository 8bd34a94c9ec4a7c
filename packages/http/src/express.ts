/**
 * `@mcp-tasks/http/express`: the endpoint mounted in Express (4 or 5), next to
 * `createMcpExpressApp` and `requireBearerAuth` of `@modelcontextprotocol/express`.
 *
 * ```ts
 * const app = createMcpExpressApp();
 * app.all("/mcp", requireBearerAuth({ verifier }), tasksExpressHandler(endpoint));
 * app.use(tasksExpressErrorHandler());
 * ```
 *
 * @packageDocumentation
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { AuthInfo } from "@modelcontextprotocol/server";
import type { TasksEndpoint } from "./endpoint.js";
import { writeRefusal } from "./node-front.js";
import { type Refusal, refusal } from "./refusals.js";

/** The parts of an Express request the handler reads (an Express `Request` is one). */
export type ExpressLikeRequest = IncomingMessage & {
  /** The body `express.json()` parsed, if it ran. */
  body?: unknown;
  /** Set by `requireBearerAuth` of `@modelcontextprotocol/express`. */
  auth?: AuthInfo;
};

/**
 * An Express handler serving the endpoint. It reads `req.auth` (`requireBearerAuth`) as the
 * request's `AuthInfo` and `req.body` when `express.json()` (part of `createMcpExpressApp`)
 * already consumed the body; otherwise it reads the body itself.
 */
export function tasksExpressHandler(
  endpoint: TasksEndpoint,
): (req: ExpressLikeRequest, res: ServerResponse, next?: (error?: unknown) => void) => void {
  return (req, res, next) => {
    endpoint
      .handle(req, res, {
        ...(req.auth !== undefined && { authInfo: req.auth }),
        ...(bodyParsed(req) && { parsedBody: req.body }),
      })
      .catch((error: unknown) => next?.(error));
  };
}

/**
 * Whether a body parser consumed the body: `req.body` set and the stream read to its end
 * (body-parser 1.x, Express 4's, also marks it `_body`).
 */
function bodyParsed(req: ExpressLikeRequest): boolean {
  return (
    req.body !== undefined && (req.readableEnded || (req as { _body?: unknown })._body === true)
  );
}

/** The error `express.json()` (body-parser) passes to `next`, as far as it is read here. */
interface BodyParserError {
  readonly type?: unknown;
  readonly status?: unknown;
  readonly limit?: unknown;
}

/**
 * An Express error handler giving `express.json()`'s failures the endpoint's answers
 * (`413` past its `limit`, `-32700` for bad JSON, `415` for an unsupported charset) instead
 * of Express's HTML error page; anything else goes on to the next error handler. Mount it
 * after the routes: `app.use(tasksExpressErrorHandler())`.
 */
export function tasksExpressErrorHandler(): (
  error: unknown,
  req: IncomingMessage,
  res: ServerResponse,
  next: (error?: unknown) => void,
) => void {
  return (error, _req, res, next) => {
    const answer = bodyParserRefusal(error);
    if (answer === undefined || res.headersSent) return next(error);
    writeRefusal(res, answer);
  };
}

function bodyParserRefusal(error: unknown): Refusal | undefined {
  if (typeof error !== "object" || error === null) return undefined;
  const { type, limit } = error as BodyParserError;
  switch (type) {
    case "entity.too.large":
      return refusal("body-too-large", { limit: typeof limit === "number" ? limit : 0 });
    case "entity.parse.failed":
      return refusal("parse-error");
    case "charset.unsupported":
    case "encoding.unsupported":
      return refusal("unsupported-media-type");
    default:
      return undefined;
  }
}
