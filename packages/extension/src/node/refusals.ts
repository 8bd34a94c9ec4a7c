import type { ServerResponse } from "node:http";
import { RPC_ERROR } from "../errors.js";
import { MAX_JSON_DEPTH } from "./json-depth.js";
import { writeJson } from "./web-bridge.js";

/** The answer to a body nested deeper than `MAX_JSON_DEPTH`, in either era. */
export const TOO_DEEP_ANSWER = Object.freeze({
  jsonrpc: "2.0",
  id: null,
  error: Object.freeze({
    code: -32600,
    message: `Invalid Request: JSON nested deeper than ${MAX_JSON_DEPTH} levels`,
  }),
});

/** A body over `maxBodyBytes`: `413`, and the connection closed (the rest is not read). */
export function writeTooLarge(res: ServerResponse, maxBodyBytes: number): void {
  writeJson(
    res,
    413,
    {
      jsonrpc: "2.0",
      id: null,
      // The SDK's answer (`createMcpHandler`, its transports), word for word.
      error: {
        code: -32000,
        message: `Payload Too Large: Request body must not exceed ${maxBodyBytes} bytes`,
      },
    },
    { Connection: "close" },
  );
}

/** A failure while serving: `500` if nothing was sent yet, else the response is just ended. */
export function writeInternalError(res: ServerResponse): void {
  if (!res.headersSent) {
    writeJson(res, 500, {
      jsonrpc: "2.0",
      id: null,
      error: { code: RPC_ERROR.INTERNAL_ERROR, message: "Internal error" },
    });
  } else res.end();
}
