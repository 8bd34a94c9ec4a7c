import type { McpServer, Server } from "@modelcontextprotocol/server";

/** The era a server instance is built for: `modern` is 2026-07-28, `legacy` 2025-11-25. */
export type ServerEra = "modern" | "legacy";

/**
 * The user's factory of their own server, called once per serving unit (a 2026-07-28
 * request, a 2025-11-25 session), as `createMcpHandler` calls its factory. Tasks are
 * attached to what it returns, before it is connected: an `McpServer` keeps its tools,
 * prompts, resources and the rest, and gains the task tools and the `tasks/*` methods.
 */
export type TasksServerFactory = (ctx: {
  readonly era: ServerEra;
}) => McpServer | Server | Promise<McpServer | Server>;
