import type { Owner, TaskRunner, TaskService, ToolDefinition } from "@mcp-tasks/core";

/**
 * The seam for the 2025-11-25 era. Requests that `isLegacyRequest` classifies as legacy go
 * to a {@link LegacyEndpoint}; the demo builds it with a {@link LegacyFactory} from the same
 * service, runner and tools as the modern leg, so both eras share one store.
 *
 * `createLegacyHandler` from `@mcp-tasks/legacy` has exactly this factory signature; the demo
 * binary plugs it in (`src/main.ts`):
 *
 * ```ts
 * import { createLegacyHandler } from "@mcp-tasks/legacy";
 * createDemoApp({ ...options, legacy: createLegacyHandler });
 * ```
 */
export interface LegacyEndpoint {
  /**
   * Serves one legacy HTTP request (POST, GET stream, DELETE session). `parsedBody` is the
   * POST body the demo already parsed; the request then carries no body of its own (the
   * body is read once). Without `parsedBody` a POST carries its raw (non-JSON) bytes.
   */
  fetch(request: Request, extra?: { readonly parsedBody?: unknown }): Promise<Response>;
  /**
   * Optional lean path (polls): answers a parsed POST completely, without a web `Request`,
   * or resolves `undefined` to have it served by {@link fetch}. `createLegacyHandler` has it.
   */
  answerDirect?(request: {
    readonly headers: { get(name: string): string | null };
    readonly owner: Owner;
    readonly parsedBody: unknown;
  }): Promise<
    | {
        readonly status: number;
        readonly headers: Readonly<Record<string, string>>;
        readonly body: string;
      }
    | undefined
  >;
  /** Closes sessions on shutdown. */
  close?(): Promise<void>;
  /** Sessions currently open (reported on `/metrics`). */
  readonly sessionCount?: number;
}

/** What a {@link LegacyFactory} receives. */
export interface LegacySeamOptions {
  readonly service: TaskService;
  readonly runner: TaskRunner;
  readonly tools: readonly ToolDefinition[];
  /** The owner the demo resolved for this HTTP request (once per request). */
  readonly ownerOf: (request: Request) => Owner | Promise<Owner>;
  readonly serverInfo: { readonly name: string; readonly version: string };
  /** Told about errors no client can receive. */
  readonly onError?: (error: unknown) => void;
}

/** Builds the legacy endpoint. */
export type LegacyFactory = (options: LegacySeamOptions) => LegacyEndpoint;

async function parseable(request: Request): Promise<boolean> {
  try {
    JSON.parse(await request.text());
    return true;
  } catch {
    return false;
  }
}

/**
 * The legacy endpoint used while no legacy facade is plugged in (or with `--legacy off`):
 * a clear JSON-RPC error naming the revision that is served. Malformed JSON gets `-32700`.
 */
export function unavailableLegacyEndpoint(reason: string): LegacyEndpoint {
  return {
    async fetch(request, extra) {
      if (
        request.method === "POST" &&
        extra?.parsedBody === undefined &&
        !(await parseable(request))
      ) {
        return Response.json(
          {
            jsonrpc: "2.0",
            id: null,
            error: { code: -32700, message: "Parse error: invalid JSON" },
          },
          { status: 400 },
        );
      }
      if (request.method !== "POST") {
        return new Response(null, { status: 405, headers: { Allow: "POST" } });
      }
      return Response.json(
        {
          jsonrpc: "2.0",
          id: null,
          error: {
            code: -32022,
            message: `Unsupported protocol version: the 2025-11-25 era is not served (${reason}); use 2026-07-28`,
            data: { supported: ["2026-07-28"] },
          },
        },
        { status: 400 },
      );
    },
  };
}
