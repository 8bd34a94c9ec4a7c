import type { IncomingMessage, ServerResponse } from "node:http";
import type { Owner } from "@mcp-tasks/core";
import { ANONYMOUS } from "@mcp-tasks/core";
import type { TasksServerFactory } from "@mcp-tasks/mcp-server";
import { type AuthInfo, createMcpHandler, type Implementation } from "@modelcontextprotocol/server";
import { bindTasksExtension } from "../binding.js";
import type { TasksExtension } from "../extension.js";
import type { JsonBody } from "./body.js";
import { createQuietTasksServer } from "./quiet-server.js";
import { webRequestFor, writeWebResponse } from "./web-bridge.js";

// The owner travels to the per-request server factory inside `authInfo.extra`: the SDK
// hands the factory nothing else of the request.
const OWNER_KEY = "io.github.mcp-tasks/owner";

function ownerOf(authInfo: AuthInfo | undefined): Owner {
  const value = authInfo?.extra?.[OWNER_KEY];
  return value && typeof value === "object" ? (value as Owner) : ANONYMOUS;
}

/** Settings of {@link createSdkFallback}. */
export interface SdkFallbackOptions {
  readonly serverInfo: Implementation;
  readonly instructions?: string;
  readonly maxBodyBytes: number;
  /** The user's server factory; without it a bare server with the extension's tools. */
  readonly server?: TasksServerFactory;
}

/** The SDK's `createMcpHandler`, serving every request the lean path does not take. */
export interface SdkFallback {
  /** Serves one request with its already-read body, as the given owner. */
  serve(
    req: IncomingMessage,
    res: ServerResponse,
    owner: Owner,
    body: JsonBody,
    authInfo: AuthInfo | undefined,
  ): Promise<void>;
  /** Ends open SDK exchanges and listen streams of the SDK's router. */
  close(): Promise<void>;
}

/**
 * `createMcpHandler` of `@modelcontextprotocol/server` with `extension` bound to the server it
 * builds per request (2025-11-25 requests rejected, as by `legacy: "reject"`), so its checks
 * and error answers are the SDK's own.
 */
export function createSdkFallback(
  extension: TasksExtension,
  options: SdkFallbackOptions,
): SdkFallback {
  const { serverInfo, maxBodyBytes } = options;
  const userServer = options.server;
  const sdk = createMcpHandler(
    async (ctx) => {
      if (userServer === undefined) {
        return createQuietTasksServer(extension, {
          owner: ownerOf(ctx.authInfo),
          serverInfo,
          ...(options.instructions !== undefined && { instructions: options.instructions }),
        });
      }
      const server = await userServer({ era: "modern" });
      bindTasksExtension(server, extension, ownerOf(ctx.authInfo));
      return server;
    },
    { legacy: "reject", maxRequestBodySize: maxBodyBytes, onerror: () => {} },
  );

  return {
    async serve(req, res, owner, body, authInfo) {
      const request = webRequestFor(req, res, body.kind === "invalid" ? body.text : undefined);
      const response = await sdk.fetch(request, {
        authInfo: {
          token: authInfo?.token ?? "",
          clientId: authInfo?.clientId ?? owner.principalId ?? "anonymous",
          scopes: authInfo?.scopes ?? [],
          ...authInfo,
          extra: { ...authInfo?.extra, [OWNER_KEY]: owner },
        },
        ...(body.kind === "json" && { parsedBody: body.value }),
      });
      await writeWebResponse(res, response);
    },
    close: () => sdk.close(),
  };
}
