// The task tool and the token check every example shares.
import { owner, type ToolDefinition } from "@mcp-tasks/core";
import {
  type AuthInfo,
  OAuthError,
  OAuthErrorCode,
  type OAuthTokenVerifier,
} from "@modelcontextprotocol/server";

/** `slow_report`: works `workMs` (default about a second), then reports on the topic. */
export function slowReport(workMs = 1_000): ToolDefinition {
  return {
    name: "slow_report",
    description: "Writes a report on a topic (takes a while: runs as a task).",
    inputSchema: {
      type: "object",
      properties: { topic: { type: "string" } },
      required: ["topic"],
    },
    taskMode: "optional",
    async run(args, ctx) {
      await ctx.setStatusMessage(`researching ${String(args.topic)}`);
      await new Promise((resolve) => setTimeout(resolve, workMs));
      ctx.signal.throwIfAborted();
      return { content: [{ type: "text", text: `Report on ${String(args.topic)}: all good.` }] };
    },
  };
}

/**
 * Two static bearer tokens, as an `OAuthTokenVerifier` (what `requireBearerAuth` takes); a
 * real server verifies JWTs or asks its authorization server instead.
 */
export const demoTokens: Readonly<Record<string, string>> = {
  "alice-token": "alice",
  "bob-token": "bob",
};

export const tokenVerifier: OAuthTokenVerifier = {
  async verifyAccessToken(token: string): Promise<AuthInfo> {
    const clientId = demoTokens[token];
    if (clientId === undefined) throw new OAuthError(OAuthErrorCode.InvalidToken, "Unknown token");
    return { token, clientId, scopes: [], expiresAt: Math.floor(Date.now() / 1000) + 3600 };
  },
};

/** The owner of a request from its `Authorization` header, for resolvers without middleware. */
export function ownerOfBearer(header: string | null) {
  const token = /^Bearer (.+)$/i.exec(header ?? "")?.[1];
  const principal = token === undefined ? undefined : demoTokens[token];
  return principal === undefined ? undefined : owner({ principalId: principal });
}
