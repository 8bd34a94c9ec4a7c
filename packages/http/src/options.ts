import type { Owner, TaskRunner, TaskService, ToolDefinition } from "@mcp-tasks/core";
import type { Implementation, McpServer, Server } from "@modelcontextprotocol/server";
import type { AllowList } from "./guards.js";
import type { OwnerLimitsOptions } from "./limits.js";
import type { ResolveOwner } from "./owner.js";
import type { Refusal } from "./refusals.js";

/** The protocol era of a request: `modern` is 2026-07-28, `legacy` is 2025-11-25. */
export type Era = "modern" | "legacy";

/**
 * The user's own MCP server, built per exchange (per request in the 2026-07-28 era, per
 * session in 2025-11-25): the tasks are attached to it and its own tools, prompts and
 * resources keep answering.
 */
export type TasksServerFactory = (ctx: {
  readonly era: Era;
}) => McpServer | Server | Promise<McpServer | Server>;

/** Settings of the 2025-11-25 era (sessions). */
export interface LegacyEraOptions {
  /** Serve the 2025-11-25 era; default true. Off, its requests get `era-not-served`. */
  readonly enabled?: boolean;
  /** Said in the `era-not-served` answer when the era is off (e.g. the flag that turned it off). */
  readonly offReason?: string;
  /** Most sessions held at once; `initialize` beyond it gets `503`. Default 10 000. */
  readonly maxSessions?: number;
  /** Closes a session idle (no request, no open stream) this long; default 30 min, 0 never. */
  readonly sessionIdleTimeoutMs?: number;
  /** How long a side request (elicitation, sampling) may wait for its answer; default 10 min. */
  readonly inputRequestTimeoutMs?: number;
}

/** A request handed to an era, after every edge check passed (for metrics and logs). */
export interface RoutedRequest {
  readonly era: Era;
  /** `GET`, `POST` or `DELETE`. */
  readonly httpMethod: string;
  /** The parsed JSON body, when there is one. */
  readonly body: unknown;
  /** `Mcp-Session-Id` (2025-11-25 sessions), when sent. */
  readonly sessionId: string | undefined;
  /** Who is calling (anonymous when no owner was resolved). */
  readonly owner: Owner;
}

/** A 2025-11-25 session opened (`initialize` answered with a session id) or ended (`DELETE`). */
export type LegacySessionEvent =
  | { readonly kind: "opened"; readonly sessionId: string; readonly clientName: string | undefined }
  | { readonly kind: "closed"; readonly sessionId: string };

/** Settings of {@link createTasksEndpoint}. */
export interface TasksEndpointOptions {
  readonly service: TaskService;
  readonly runner: TaskRunner;
  /** The task tools, served in both eras. */
  readonly tools: readonly ToolDefinition[];
  /**
   * Your own server, built per exchange (per request in 2026-07-28, per session in
   * 2025-11-25): the tasks are attached to it in both eras (`bindTasksExtension`, the legacy
   * session), so an `McpServer` keeps its tools, prompts and resources next to the task
   * tools. Without it, a server serving only the task tools.
   */
  readonly server?: TasksServerFactory;
  /** Server name and version; default `{ name: "mcp-tasks", version: "0.1.0" }`. */
  readonly serverInfo?: Implementation;
  /** Instructions shown to clients (`server/discover`, `initialize`). */
  readonly instructions?: string;
  /**
   * Who is calling, once per HTTP request (see {@link ResolveOwner}); default the request's
   * `AuthInfo` through `ownerFromAuthInfo` (anonymous without one).
   */
  readonly owner?: ResolveOwner;
  /**
   * Refuse anonymous callers `401`. Default: `true` when an `owner` hook is given (the
   * require-owner posture: every task then has an owner), else `false`. Pass `false` to let
   * anonymous callers in beside an owner hook. Unowned tasks are a `TaskService` matter:
   * by default (its `requireOwner` off) an unowned task is visible to every caller, so
   * construct the service with `requireOwner: true` too (the edge reports a mismatch to
   * `onError` once).
   */
  readonly requireOwner?: boolean;
  /** The `WWW-Authenticate` value of `401` answers; default `Bearer`. */
  readonly authChallenge?: string;
  /**
   * Accepted `Host` names (DNS-rebinding protection): default `"loopback"` (`localhost`,
   * `127.0.0.1`, `[::1]`). Serving other interfaces, list the names clients use, or `"any"`.
   * A Host header that forms no URL is refused `400` whatever this says.
   */
  readonly allowedHosts?: AllowList;
  /**
   * Accepted `Origin` hostnames (a request without `Origin` passes): default `"loopback"`
   * when `allowedHosts` is loopback, else `"any"`.
   */
  readonly allowedOrigins?: AllowList;
  /** Largest request body in bytes; default 1 MiB. Larger bodies get `413`. */
  readonly maxBodyBytes?: number;
  /**
   * How long a request body may take to arrive once the headers are in; default 30 000 ms,
   * 0 disables. A body still arriving then gets `408` and the connection is closed.
   * Responses (SSE streams) are not bounded by it.
   */
  readonly bodyTimeoutMs?: number;
  /** SSE keepalive comment interval of 2026-07-28 task listen streams; default 15 000 ms. */
  readonly keepAliveMs?: number;
  /** The 2025-11-25 era: `false` turns it off; default on. */
  readonly legacy?: boolean | LegacyEraOptions;
  /**
   * Per-owner limits: 2025-11-25 sessions, listen streams and their task ids, blocking
   * `tasks/result` waits, and an optional request rate (see {@link OwnerLimitsOptions}
   * for the defaults). Anonymous callers share one budget.
   */
  readonly limits?: OwnerLimitsOptions;
  /** Told about failures no client can receive, and about refused Host headers. */
  readonly onError?: (error: unknown) => void;
  /** Told about each request handed to an era. */
  readonly onRouted?: (request: RoutedRequest) => void;
  /** Told when a 2025-11-25 session opens or ends. */
  readonly onLegacySession?: (event: LegacySessionEvent) => void;
  /** Told about each refusal answered at the edge (per-owner limits included). */
  readonly onRefused?: (refusal: Refusal) => void;
}
