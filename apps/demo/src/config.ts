import { parseArgs } from "node:util";
import { DEFAULT_OWNER_LIMITS, type OwnerLimitsOptions } from "@mcp-tasks/http";
import { DEFAULT_JWT_MAX_AGE_SECONDS } from "./auth/jwt.js";
import type { OtelMode } from "./otel.js";
import { DEFAULT_STORE_LIMITS, type StoreKind, type StoreLimits } from "./store.js";

/** What a node does: everything, only MCP over HTTP, or only running tasks. */
export type Role = "all" | "http" | "worker";

/** The owner-extraction hooks the demo can run with. */
export type AuthKind = "tokens" | "jwt" | "gateway";

/** The demo's settings after flags and environment. */
export interface DemoConfig {
  readonly host: string;
  readonly port: number;
  readonly store: StoreKind;
  /** pglite: where the database lives (`<dataDir>/pglite`). */
  readonly dataDir: string;
  /** postgres: the connection URL. */
  readonly databaseUrl: string;
  /** pglite/postgres: the schema of the task table. */
  readonly schema: string | undefined;
  /** How long a node's lease on a running task lasts (pglite/postgres). */
  readonly leaseMs: number;
  /** How often expired tasks are deleted and orphaned tasks failed (pglite/postgres). */
  readonly sweepMs: number;
  /** The store's quotas: tasks held, tasks and payload bytes per owner (`store_full`). */
  readonly limits: StoreLimits;
  /** How callers are identified: static bearer tokens, JWTs, or a trusted gateway header. */
  readonly auth: AuthKind;
  /** `token=principal@tenant,...`, or `undefined` to generate two dev tokens. */
  readonly tokens: string | undefined;
  /** jwt: an HS256 shared secret (or use `jwksUrl`). */
  readonly jwtSecret: string | undefined;
  /** jwt: where the issuer publishes its keys (RS/ES/EdDSA). */
  readonly jwksUrl: string | undefined;
  /** jwt: required `iss`. */
  readonly jwtIssuer: string | undefined;
  /** jwt: required `aud`; it becomes the owner's audience. */
  readonly jwtAudience: string | undefined;
  /** jwt: the claim holding the tenant (default `tenant`). */
  readonly jwtTenantClaim: string;
  /** jwt: the oldest token accepted by its `iat`, in seconds; 0 for no bound. */
  readonly jwtMaxAgeSeconds: number;
  /** gateway: the secret the gateway sends in `x-gateway-secret`. */
  readonly gatewaySecret: string | undefined;
  /** gateway: the header naming the caller as `principal@tenant`. */
  readonly gatewayHeader: string;
  /**
   * The require-owner posture (anonymous callers refused, unowned tasks invisible): on by
   * default, off with `--allow-anonymous`.
   */
  readonly requireAuth: boolean;
  /** The per-owner limits of the endpoint. */
  readonly ownerLimits: OwnerLimitsOptions;
  /** Bearer token of `/metrics` (and of the holder in `/health`); none by default. */
  readonly metricsToken: string | undefined;
  /** Operator tokens of the web console at /console (every owner's tasks); none by default. */
  readonly adminTokens: readonly string[];
  readonly legacy: boolean;
  /** all: serve MCP and run tasks; http: serve MCP, claim nothing; worker: run tasks only. */
  readonly role: Role;
  /** Most task handlers running at once on this node. */
  readonly concurrency: number | undefined;
  /**
   * Most tasks one owner may have running at once across the cluster (`Infinity`: no cap;
   * `undefined`: the runner's default, a quarter of the concurrency).
   */
  readonly ownerRunningCap: number | undefined;
  /** Of one owner's tasks waiting for input, how many hold no worker (`undefined`: default). */
  readonly ownerWaitingCap: number | undefined;
  /** Where traces go: off (default), console, or OTLP/HTTP (`OTEL_EXPORTER_OTLP_ENDPOINT`). */
  readonly otel: OtelMode;
  readonly help: boolean;
}

export const HELP = `Usage: mcp-tasks-demo [options]

Serves MCP tasks at http://HOST:PORT/mcp for 2026-07-28 clients (tasks extension) and
2025-11-25 clients (sessions) at once, and request counters at http://HOST:PORT/metrics.

Options (flag / environment variable):
  --port N            PORT             port to listen on; 0 picks a free port (default 3000)
  --host H            HOST             address to bind (default 127.0.0.1)
  --store KIND        MCP_TASKS_STORE  memory | pglite | postgres (default memory)
  --data-dir DIR      PGLITE_DIR       pglite: data directory (default ./.mcp-tasks)
  --database-url URL  DATABASE_URL     postgres: connection URL
                                       (default postgres://postgres@127.0.0.1:5432/test)
  --schema NAME       MCP_TASKS_SCHEMA pglite/postgres: schema of the task table (default public)
  --lease-ms N        MCP_TASKS_LEASE_MS  pglite/postgres: lease on running tasks; a task whose
                                       node stops renewing it is re-run elsewhere (if its tool
                                       allows retries) or failed "Worker lost" (default 30000)
  --sweep-ms N        MCP_TASKS_SWEEP_MS  pglite/postgres: expiry and orphan sweep interval
                                       (default the lease, at most 10000)
  --max-tasks N       MCP_TASKS_MAX_TASKS  most tasks held at once, finished ones included
                                       until their ttl ends (default 100000)
  --max-tasks-per-owner N  MCP_TASKS_MAX_TASKS_PER_OWNER  most tasks one owner (anonymous
                                       callers are one owner) holds at once (default 10000:
                                       a task a second under the 1 h default ttl fits)
  --max-bytes-per-owner N  MCP_TASKS_MAX_BYTES_PER_OWNER  most bytes of arguments, results
                                       and input answers one owner's tasks hold; a K, M or
                                       G suffix counts KiB, MiB, GiB (default 64M)
                                       Past a quota new tasks get -32603, data.reason
                                       "store_full" and data.quota naming the quota
  --auth KIND         DEMO_AUTH        tokens | jwt | gateway: how callers are identified
                                       (default tokens)
  --tokens LIST       DEMO_TOKENS      tokens: alice-token=alice@acme,bob-token=bob@acme
                                       (default: two random dev tokens, printed at start)
  --jwt-secret S      DEMO_JWT_SECRET  jwt: HS256 shared secret (32+ characters), or
  --jwks-url URL      DEMO_JWKS_URL    jwt: the issuer's JWKS (RS/ES/EdDSA keys)
  --jwt-issuer ISS    DEMO_JWT_ISSUER  jwt: required iss
  --jwt-audience AUD  DEMO_JWT_AUDIENCE  jwt: required aud (becomes the owner's audience)
  --jwt-tenant-claim C  DEMO_JWT_TENANT_CLAIM  jwt: claim holding the tenant (default tenant)
                                       (sub is the principal; a tenant that is not a
                                       string is refused)
  --jwt-max-age S     DEMO_JWT_MAX_AGE  jwt: oldest token accepted, by its iat, in seconds
                                       (default 86400; 0: no bound). Tokens must carry exp
                                       (and iat under a bound); starting without
                                       --jwt-audience prints a warning
  --gateway-secret S  DEMO_GATEWAY_SECRET  gateway: secret the gateway sends in x-gateway-secret
  --gateway-header H  DEMO_GATEWAY_HEADER  gateway: header with principal@tenant
                                       (default x-authenticated-user)
  --allow-anonymous   DEMO_ALLOW_ANONYMOUS=1  let anonymous callers in: they share one
                                       owner, and unowned tasks are visible to every caller.
                                       By default (--require-auth, DEMO_REQUIRE_AUTH=1)
                                       anonymous requests get 401 and unowned tasks are
                                       invisible; DEMO_REQUIRE_AUTH=0 also allows anonymous
  --metrics-token T   DEMO_METRICS_TOKEN  bearer token (16+ characters) required by /metrics;
                                       /health names the lease holder only to its bearer
  --max-sessions-per-owner N  MCP_TASKS_MAX_SESSIONS_PER_OWNER  2025-11-25 sessions one
                                       owner holds (default ${DEFAULT_OWNER_LIMITS.maxSessionsPerOwner}; 0: no limit)
  --max-streams-per-owner N  MCP_TASKS_MAX_STREAMS_PER_OWNER  open subscriptions/listen
                                       task streams per owner (default ${DEFAULT_OWNER_LIMITS.maxListenStreamsPerOwner})
  --max-subscribed-per-owner N  MCP_TASKS_MAX_SUBSCRIBED_PER_OWNER  task ids subscribed
                                       across one owner's streams (default ${DEFAULT_OWNER_LIMITS.maxSubscribedTasksPerOwner})
  --max-waits-per-owner N  MCP_TASKS_MAX_WAITS_PER_OWNER  blocking 2025-11-25 tasks/result
                                       waits per owner (default ${DEFAULT_OWNER_LIMITS.maxResultWaitsPerOwner})
  --rate-limit N      MCP_TASKS_RATE_LIMIT  requests per second per owner (token bucket,
                                       burst 2N; default 0: off)
                                       Anonymous callers share one budget. Past a limit:
                                       -32603 with data.reason and data.retryAfterMs (HTTP
                                       429 with Retry-After when the request has no id)
  --admin-tokens LIST DEMO_ADMIN_TOKENS  operator tokens (comma-separated, 16+ characters each)
                                       of the web console at /console: every owner's tasks
                                       and the traffic panel; owners sign in with their MCP
                                       token and see their own tasks
  --legacy on|off     DEMO_LEGACY      serve the 2025-11-25 era (default on)
  --role ROLE         MCP_TASKS_ROLE   all | http | worker (default all): http serves MCP and
                                       claims no task; worker runs queued tasks and serves
                                       only /metrics and /health (pglite/postgres)
  --concurrency N     MCP_TASKS_CONCURRENCY  most task handlers running at once on this node
                                       (default 16 per CPU core); more tasks wait, "Queued"
  --owner-running-cap N|off  MCP_TASKS_OWNER_RUNNING_CAP  most tasks one owner may have
                                       running at once across all nodes (default a quarter
                                       of --concurrency, at least 1); more wait, "Queued:
                                       owner limit reached"; off for no cap
  --owner-waiting-cap N|off  MCP_TASKS_OWNER_WAITING_CAP  of one owner's tasks waiting for
                                       input, how many hold no worker slot (default
                                       --concurrency); the rest count as running
  --otel MODE         DEMO_OTEL        off | console | otlp (default off): OpenTelemetry traces
                                       of task creation, runs and polls; otlp sends them to
                                       OTEL_EXPORTER_OTLP_ENDPOINT (default localhost:4318)
  -h, --help                           show this help
`;

/** Thrown for bad flags; the message is for the user. */
export class ConfigError extends Error {
  override readonly name = "ConfigError";
}

function truthy(value: string | undefined): boolean {
  return value !== undefined && /^(1|true|yes|on)$/i.test(value);
}

function positiveInt(name: string, text: string, min: number, max: number): number {
  const value = Number(text);
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(value) || value < min || value > max) {
    throw new ConfigError(`${name} must be an integer from ${min} to ${max}, got '${text}'`);
  }
  return value;
}

/** A byte count: digits, optionally followed by K, M or G (KiB, MiB, GiB; `B`/`iB` allowed). */
function byteSize(name: string, text: string): number {
  const match = /^(\d+)\s*(?:([kmg])(?:i?b)?|b)?$/i.exec(text.trim());
  const unit = { k: 1024, m: 1024 ** 2, g: 1024 ** 3 }[match?.[2]?.toLowerCase() ?? ""] ?? 1;
  const value = match === null ? Number.NaN : Number(match[1]) * unit;
  if (!Number.isSafeInteger(value) || value < 1 || value > 1024 ** 4) {
    throw new ConfigError(
      `${name} must be a byte count from 1 to 1024G (e.g. 65536, 64K, 64M), got '${text}'`,
    );
  }
  return value;
}

/**
 * `--admin-tokens`: comma-separated operator tokens of the console, each 16+ visible ASCII
 * characters, none of them also an MCP token (operators and owners stay apart).
 */
function adminTokens(list: string | undefined, mcpTokens: string | undefined): string[] {
  const tokens = (list ?? "")
    .split(",")
    .map((t) => t.trim())
    .filter((t) => t.length > 0);
  const mcp = new Set(
    (mcpTokens ?? "").split(",").map((entry) => entry.slice(0, entry.indexOf("=")).trim()),
  );
  for (const token of tokens) {
    if (!/^[\x21-\x7e]{16,512}$/.test(token)) {
      throw new ConfigError(
        "--admin-tokens: each operator token needs 16 to 512 visible ASCII characters",
      );
    }
    if (mcp.has(token)) {
      throw new ConfigError("--admin-tokens: an operator token must not also be an MCP token");
    }
  }
  return tokens;
}

/** Parses flags (winning) and environment variables. */
export function parseConfig(argv: readonly string[], env: NodeJS.ProcessEnv): DemoConfig {
  let values: ReturnType<typeof parse>["values"];
  function parse() {
    return parseArgs({
      args: [...argv],
      strict: true,
      allowPositionals: false,
      options: {
        port: { type: "string" },
        host: { type: "string" },
        store: { type: "string" },
        "data-dir": { type: "string" },
        "database-url": { type: "string" },
        schema: { type: "string" },
        "lease-ms": { type: "string" },
        "sweep-ms": { type: "string" },
        "max-tasks": { type: "string" },
        "max-tasks-per-owner": { type: "string" },
        "max-bytes-per-owner": { type: "string" },
        auth: { type: "string" },
        tokens: { type: "string" },
        "jwt-secret": { type: "string" },
        "jwks-url": { type: "string" },
        "jwt-issuer": { type: "string" },
        "jwt-audience": { type: "string" },
        "jwt-tenant-claim": { type: "string" },
        "gateway-secret": { type: "string" },
        "gateway-header": { type: "string" },
        "jwt-max-age": { type: "string" },
        "require-auth": { type: "boolean" },
        "allow-anonymous": { type: "boolean" },
        "metrics-token": { type: "string" },
        "max-sessions-per-owner": { type: "string" },
        "max-streams-per-owner": { type: "string" },
        "max-subscribed-per-owner": { type: "string" },
        "max-waits-per-owner": { type: "string" },
        "rate-limit": { type: "string" },
        "admin-tokens": { type: "string" },
        legacy: { type: "string" },
        role: { type: "string" },
        concurrency: { type: "string" },
        "owner-running-cap": { type: "string" },
        "owner-waiting-cap": { type: "string" },
        otel: { type: "string" },
        help: { type: "boolean", short: "h" },
      },
    });
  }
  try {
    values = parse().values;
  } catch (error) {
    throw new ConfigError((error as Error).message);
  }
  const port = positiveInt("--port", values.port ?? (env.PORT || "3000"), 0, 65535);
  const store = values.store ?? (env.MCP_TASKS_STORE || "memory");
  if (store !== "memory" && store !== "pglite" && store !== "postgres") {
    throw new ConfigError(`--store must be memory, pglite or postgres, got '${store}'`);
  }
  const legacy = values.legacy ?? (env.DEMO_LEGACY || "on");
  if (legacy !== "on" && legacy !== "off") {
    throw new ConfigError(`--legacy must be on or off, got '${legacy}'`);
  }
  const role = values.role ?? (env.MCP_TASKS_ROLE || "all");
  if (role !== "all" && role !== "http" && role !== "worker") {
    throw new ConfigError(`--role must be all, http or worker, got '${role}'`);
  }
  if (role !== "all" && store === "memory") {
    throw new ConfigError(
      `--role ${role} needs a store shared by nodes (--store postgres or pglite), not memory`,
    );
  }
  const otel = values.otel ?? (env.DEMO_OTEL || "off");
  if (otel !== "off" && otel !== "console" && otel !== "otlp") {
    throw new ConfigError(`--otel must be off, console or otlp, got '${otel}'`);
  }
  const concurrencyText = values.concurrency ?? (env.MCP_TASKS_CONCURRENCY || undefined);
  const concurrency =
    concurrencyText === undefined
      ? undefined
      : positiveInt("--concurrency", concurrencyText, 1, 10_000);
  const cap = (flag: string, text: string | undefined, min: number) =>
    text === undefined
      ? undefined
      : text === "off"
        ? Number.POSITIVE_INFINITY
        : positiveInt(flag, text, min, 1_000_000);
  const ownerRunningCap = cap(
    "--owner-running-cap",
    values["owner-running-cap"] ?? (env.MCP_TASKS_OWNER_RUNNING_CAP || undefined),
    1,
  );
  const ownerWaitingCap = cap(
    "--owner-waiting-cap",
    values["owner-waiting-cap"] ?? (env.MCP_TASKS_OWNER_WAITING_CAP || undefined),
    0,
  );
  const schema = values.schema ?? (env.MCP_TASKS_SCHEMA || undefined);
  if (schema !== undefined && !/^[a-z_][a-z0-9_]{0,40}$/.test(schema)) {
    throw new ConfigError(
      `--schema must be a lower-case SQL identifier of at most 41 characters, got '${schema}'`,
    );
  }
  const leaseMs = positiveInt(
    "--lease-ms",
    values["lease-ms"] ?? (env.MCP_TASKS_LEASE_MS || "30000"),
    100,
    86_400_000,
  );
  const sweepText = values["sweep-ms"] ?? (env.MCP_TASKS_SWEEP_MS || undefined);
  const sweepMs =
    sweepText === undefined
      ? Math.min(leaseMs, 10_000)
      : positiveInt("--sweep-ms", sweepText, 50, 86_400_000);
  const limits: StoreLimits = {
    maxTasks: positiveInt(
      "--max-tasks",
      values["max-tasks"] ?? (env.MCP_TASKS_MAX_TASKS || String(DEFAULT_STORE_LIMITS.maxTasks)),
      1,
      1_000_000_000,
    ),
    maxTasksPerOwner: positiveInt(
      "--max-tasks-per-owner",
      values["max-tasks-per-owner"] ??
        (env.MCP_TASKS_MAX_TASKS_PER_OWNER || String(DEFAULT_STORE_LIMITS.maxTasksPerOwner)),
      1,
      1_000_000_000,
    ),
    maxBytesPerOwner: byteSize(
      "--max-bytes-per-owner",
      values["max-bytes-per-owner"] ??
        (env.MCP_TASKS_MAX_BYTES_PER_OWNER || String(DEFAULT_STORE_LIMITS.maxBytesPerOwner)),
    ),
  };
  const host = values.host ?? (env.HOST || "127.0.0.1");
  const auth = values.auth ?? (env.DEMO_AUTH || "tokens");
  if (auth !== "tokens" && auth !== "jwt" && auth !== "gateway") {
    throw new ConfigError(`--auth must be tokens, jwt or gateway, got '${auth}'`);
  }
  const jwtSecret = values["jwt-secret"] ?? (env.DEMO_JWT_SECRET || undefined);
  const jwksUrl = values["jwks-url"] ?? (env.DEMO_JWKS_URL || undefined);
  if (auth === "jwt") {
    if ((jwtSecret === undefined) === (jwksUrl === undefined)) {
      throw new ConfigError("--auth jwt needs exactly one of --jwt-secret and --jwks-url");
    }
    if (jwtSecret !== undefined && jwtSecret.length < 32) {
      throw new ConfigError("--jwt-secret needs at least 32 characters");
    }
    if (jwksUrl !== undefined && !URL.canParse(jwksUrl)) {
      throw new ConfigError(`--jwks-url is not a URL: '${jwksUrl}'`);
    }
  }
  const gatewaySecret = values["gateway-secret"] ?? (env.DEMO_GATEWAY_SECRET || undefined);
  if (auth === "gateway" && (gatewaySecret === undefined || gatewaySecret.length < 16)) {
    throw new ConfigError("--auth gateway needs a --gateway-secret of at least 16 characters");
  }
  if (auth === "gateway" && gatewaySecret?.includes(",")) {
    throw new ConfigError("--gateway-secret may hold no comma (a comma marks a repeated header)");
  }
  const metricsToken = values["metrics-token"] ?? (env.DEMO_METRICS_TOKEN || undefined);
  if (metricsToken !== undefined && !/^[\x21-\x7e]{16,512}$/.test(metricsToken)) {
    throw new ConfigError("--metrics-token needs 16 to 512 visible ASCII characters");
  }
  const allowAnonymous =
    values["allow-anonymous"] ??
    (truthy(env.DEMO_ALLOW_ANONYMOUS) || /^(0|false|no|off)$/i.test(env.DEMO_REQUIRE_AUTH ?? ""));
  if (allowAnonymous && values["require-auth"] === true) {
    throw new ConfigError("--allow-anonymous and --require-auth contradict each other");
  }
  const limit = (flag: string, envName: string, fallback: number) =>
    positiveInt(
      `--${flag}`,
      values[flag as "rate-limit"] ?? (env[envName] || String(fallback)),
      0,
      1_000_000,
    );
  const ownerLimits: OwnerLimitsOptions = {
    maxSessionsPerOwner: limit(
      "max-sessions-per-owner",
      "MCP_TASKS_MAX_SESSIONS_PER_OWNER",
      DEFAULT_OWNER_LIMITS.maxSessionsPerOwner,
    ),
    maxListenStreamsPerOwner: limit(
      "max-streams-per-owner",
      "MCP_TASKS_MAX_STREAMS_PER_OWNER",
      DEFAULT_OWNER_LIMITS.maxListenStreamsPerOwner,
    ),
    maxSubscribedTasksPerOwner: limit(
      "max-subscribed-per-owner",
      "MCP_TASKS_MAX_SUBSCRIBED_PER_OWNER",
      DEFAULT_OWNER_LIMITS.maxSubscribedTasksPerOwner,
    ),
    maxResultWaitsPerOwner: limit(
      "max-waits-per-owner",
      "MCP_TASKS_MAX_WAITS_PER_OWNER",
      DEFAULT_OWNER_LIMITS.maxResultWaitsPerOwner,
    ),
    requestsPerSecond: limit("rate-limit", "MCP_TASKS_RATE_LIMIT", 0),
  };
  return {
    host,
    port,
    store,
    dataDir: values["data-dir"] ?? (env.PGLITE_DIR || ".mcp-tasks"),
    databaseUrl:
      values["database-url"] ?? (env.DATABASE_URL || "postgres://postgres@127.0.0.1:5432/test"),
    schema,
    leaseMs,
    sweepMs,
    limits,
    auth,
    tokens: values.tokens ?? (env.DEMO_TOKENS || undefined),
    jwtSecret,
    jwksUrl,
    jwtIssuer: values["jwt-issuer"] ?? (env.DEMO_JWT_ISSUER || undefined),
    jwtAudience: values["jwt-audience"] ?? (env.DEMO_JWT_AUDIENCE || undefined),
    jwtTenantClaim: values["jwt-tenant-claim"] ?? (env.DEMO_JWT_TENANT_CLAIM || "tenant"),
    jwtMaxAgeSeconds: positiveInt(
      "--jwt-max-age",
      values["jwt-max-age"] ?? (env.DEMO_JWT_MAX_AGE || String(DEFAULT_JWT_MAX_AGE_SECONDS)),
      0,
      31_536_000,
    ),
    gatewaySecret,
    gatewayHeader: values["gateway-header"] ?? (env.DEMO_GATEWAY_HEADER || "x-authenticated-user"),
    requireAuth: !allowAnonymous,
    ownerLimits,
    metricsToken,
    adminTokens: adminTokens(
      values["admin-tokens"] ?? env.DEMO_ADMIN_TOKENS,
      values.tokens ?? env.DEMO_TOKENS,
    ),
    legacy: legacy === "on",
    role,
    concurrency,
    ownerRunningCap,
    ownerWaitingCap,
    otel,
    help: values.help ?? false,
  };
}
