import type { Owner } from "@mcp-tasks/core";
import {
  bindTasksExtension,
  createNodeTasksHandler,
  createTasksServer,
  type NodeTasksHandler,
  TasksExtension,
} from "@mcp-tasks/extension";
import { createLegacyHandler, type LegacyHandler } from "@mcp-tasks/legacy";
import { type AuthInfo, createMcpHandler, type McpHttpHandler } from "@modelcontextprotocol/server";
import { HeadGuards } from "./guards.js";
import type { LegacyEraOptions, TasksEndpointOptions } from "./options.js";
import { type CallerOptions, resolveOwnerFromAuthInfo } from "./owner.js";
import { type Refusal, refusal } from "./refusals.js";

const DEFAULT_SERVER_INFO = { name: "mcp-tasks", version: "0.1.0" };
/** Where the resolved owner travels to the SDK-served 2026-07-28 handlers. */
const OWNER_KEY = "io.github.mcp-tasks/owner";

/**
 * Everything both fronts (`node:http` and `fetch`) share: the settings, the head checks, the
 * two era legs built from one service, runner and tool list.
 */
export class Edge {
  readonly extension: TasksExtension;
  /** The 2026-07-28 leg for `node:http` (the polling fast paths). */
  readonly modern: NodeTasksHandler;
  /** The 2026-07-28 leg for web `Request`s (SDK-served, plus task listen streams). */
  readonly modernFetch: McpHttpHandler;
  /** The 2025-11-25 leg; `undefined` when that era is off. */
  readonly legacy: LegacyHandler | undefined;
  readonly legacyOffReason: string | undefined;
  readonly guards: HeadGuards;
  readonly caller: CallerOptions;
  readonly maxBodyBytes: number;
  readonly bodyTimeoutMs: number;
  readonly keepAliveMs: number;
  readonly onError: (error: unknown) => void;
  readonly options: TasksEndpointOptions;
  /** The owner of each web `Request` handed to the legacy leg (its `ownerOf` reads it). */
  readonly owners = new WeakMap<Request, Owner>();
  closed = false;

  constructor(options: TasksEndpointOptions) {
    this.options = options;
    this.onError = options.onError ?? (() => {});
    this.maxBodyBytes = options.maxBodyBytes ?? 1024 * 1024;
    this.bodyTimeoutMs = options.bodyTimeoutMs ?? 30_000;
    this.keepAliveMs = options.keepAliveMs ?? 15_000;
    const hosts = options.allowedHosts ?? "loopback";
    this.guards = new HeadGuards(
      hosts,
      options.allowedOrigins ?? (hosts === "loopback" ? "loopback" : "any"),
    );
    this.caller = {
      resolve: options.owner ?? resolveOwnerFromAuthInfo,
      requireOwner: options.requireOwner ?? false,
      challenge: options.authChallenge ?? "Bearer",
    };
    const serverInfo = options.serverInfo ?? DEFAULT_SERVER_INFO;
    const instructions = options.instructions;
    const { service, runner, tools } = options;
    this.extension = new TasksExtension({ service, runner, tools, onError: this.onError });
    const userServer = options.server;
    this.modern = createNodeTasksHandler(this.extension, {
      serverInfo,
      ...(userServer !== undefined && { server: userServer }),
      maxBodyBytes: this.maxBodyBytes,
      keepAliveMs: this.keepAliveMs,
      onError: this.onError,
      ...(instructions !== undefined && { instructions }),
    });
    const extension = this.extension;
    // The 2026-07-28 leg for web requests: as `createNodeTasksHandler` builds its SDK leg.
    this.modernFetch = createMcpHandler(
      async (ctx) => {
        const owner = ownerOfAuthInfo(ctx.authInfo);
        if (userServer === undefined) {
          return createTasksServer(extension, {
            owner,
            serverInfo,
            ...(instructions !== undefined && { instructions }),
          });
        }
        const server = await userServer({ era: "modern" });
        bindTasksExtension(server, extension, owner);
        return server;
      },
      { legacy: "reject", maxRequestBodySize: this.maxBodyBytes, onerror: () => {} },
    );
    const legacy: LegacyEraOptions =
      typeof options.legacy === "object" ? options.legacy : { enabled: options.legacy ?? true };
    this.legacyOffReason = legacy.offReason;
    this.legacy =
      legacy.enabled === false
        ? undefined
        : createLegacyHandler({
            service,
            runner,
            tools,
            serverInfo,
            ownerOf: (request) => this.owners.get(request) ?? ownerOfAuthInfo(undefined),
            onError: this.onError,
            ...(userServer !== undefined && { server: userServer }),
            ...(instructions !== undefined && { instructions }),
            ...(legacy.maxSessions !== undefined && { maxSessions: legacy.maxSessions }),
            ...(legacy.sessionIdleTimeoutMs !== undefined && {
              sessionIdleTimeoutMs: legacy.sessionIdleTimeoutMs,
            }),
            ...(legacy.inputRequestTimeoutMs !== undefined && {
              inputRequestTimeoutMs: legacy.inputRequestTimeoutMs,
            }),
          });
  }

  /** Reports a refusal answered at the edge; a refused Host is also logged (`onError`). */
  refused(refused: Refusal, method: string): void {
    if (refused.kind === "invalid-host-header" || refused.kind === "host-not-allowed") {
      this.onError(new Error(`rejected ${method}: ${refused.message} (HTTP ${refused.status})`));
    }
    this.options.onRefused?.(refused);
  }

  /**
   * The answer to a request of the 2025-11-25 era (or one that is not JSON) when that era is
   * off: `-32700` for a body that is not JSON, `405` for GET and DELETE (no sessions), else
   * `era-not-served`.
   */
  eraNotServed(method: string, invalidJson: boolean): Refusal {
    if (invalidJson) return refusal("parse-error");
    if (method !== "POST") return refusal("method-not-allowed", { allow: "POST" });
    return refusal("era-not-served", {
      ...(this.legacyOffReason !== undefined && { reason: this.legacyOffReason }),
    });
  }

  /** `AuthInfo` for the SDK-served handlers, carrying the resolved owner. */
  authInfoFor(owner: Owner, authInfo: AuthInfo | undefined): AuthInfo {
    return {
      token: authInfo?.token ?? "",
      clientId: authInfo?.clientId ?? owner.principalId ?? "anonymous",
      scopes: authInfo?.scopes ?? [],
      ...authInfo,
      extra: { ...authInfo?.extra, [OWNER_KEY]: owner },
    };
  }
}

/** The owner {@link Edge.authInfoFor} put in `AuthInfo`, or anonymous. */
function ownerOfAuthInfo(authInfo: AuthInfo | undefined): Owner {
  const value = authInfo?.extra?.[OWNER_KEY];
  return value && typeof value === "object"
    ? (value as Owner)
    : { principalId: null, tenantId: null, audience: null };
}
