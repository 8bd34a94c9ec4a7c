import type { IncomingMessage } from "node:http";
import { type ConsoleHandler, createConsoleHandler } from "@mcp-tasks/console";
import type { OperatorView, TaskService } from "@mcp-tasks/core";
import type { OwnerResolver } from "./auth/resolver.js";
import type { DemoMetrics } from "./metrics.js";

/** What the demo's console is built from. */
export interface DemoConsoleOptions {
  /** The app's task service (the console reads and acts through it). */
  readonly service: TaskService;
  /** The app's cross-owner reads, for operators. */
  readonly operatorView: OperatorView;
  /** The app's metrics: the traffic panel samples their per-era, per-client request counts. */
  readonly metrics: Pick<DemoMetrics, "requests">;
  /** The same owner hooks as MCP requests (tokens, JWT or gateway header). */
  readonly resolver: OwnerResolver;
  /** `--admin-tokens`: operators see every owner's tasks and the traffic panel. */
  readonly adminTokens: readonly string[];
  /** Tool names offered in the tool filter. */
  readonly toolNames: readonly string[];
  /** How often traffic is sampled; default 10 s. */
  readonly trafficSampleMs?: number;
  /** Told about each live view refused by a limit (for `mcp_limit_refusals_total`). */
  readonly onLiveRefused?: (limit: "owner" | "all") => void;
}

/** A node request's headers as a fetch `Request`, which the owner resolvers read. */
function asRequest(req: IncomingMessage): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined) continue;
    try {
      headers.set(name, Array.isArray(value) ? value.join(", ") : value);
    } catch {
      // A header fetch refuses is one no resolver reads.
    }
  }
  return new Request("http://127.0.0.1/console", { headers });
}

/**
 * The web console at `/console` (see `@mcp-tasks/console`): owners are resolved by the same
 * hooks as MCP requests; an anonymous or refused caller gets the sign-in message, since the
 * console shows tasks only to someone who signed in.
 */
export function createDemoConsole(options: DemoConsoleOptions): ConsoleHandler {
  return createConsoleHandler({
    service: options.service,
    basePath: "/console",
    adminTokens: options.adminTokens,
    operatorView: options.operatorView,
    resolveOwner: async (req) => {
      const resolution = await options.resolver.resolve(asRequest(req));
      return resolution.kind === "owner" ? resolution.owner : null;
    },
    traffic: () => options.metrics.requests.trafficSnapshot(),
    toolNames: options.toolNames,
    ...(options.trafficSampleMs !== undefined && { trafficSampleMs: options.trafficSampleMs }),
    ...(options.onLiveRefused !== undefined && { onLiveRefused: options.onLiveRefused }),
  });
}
