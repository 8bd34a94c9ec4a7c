import {
  isTaskError,
  type RunnerStats,
  type TaskService,
  type TaskStore,
  type Unsubscribe,
} from "@mcp-tasks/core";
import type { TaskQueueStore } from "@mcp-tasks/core/store";
import { Counter, collectDefaultMetrics, Gauge, Registry } from "prom-client";
import { instrumentStore, type StoreOperation } from "./instrumented-store.js";
import { LabelledHistogram } from "./labelled-metrics.js";
import { type Era, RequestMetrics, type TrafficSnapshot } from "./request-metrics.js";
import { TaskMetrics } from "./task-metrics.js";

export {
  clientLabel,
  ERAS,
  type Era,
  RequestMetrics,
  type TrafficBucket,
  type TrafficSnapshot,
} from "./request-metrics.js";

/** Why a per-owner limit refused a request: the label values of `mcp_limit_refusals_total`. */
export type LimitRefusalReason =
  | "rate_limited"
  | "too_many_sessions"
  | "too_many_streams"
  | "too_many_subscriptions"
  | "too_many_waits"
  | "console_live_views_owner"
  | "console_live_views_all";

/** Store calls take well under a millisecond in memory and a few ms on PostgreSQL. */
const STORE_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];

/** Settings of {@link DemoMetrics}. */
export interface DemoMetricsOptions {
  /** The `store` label of the store metrics, e.g. `memory`, `pglite`, `postgres`. */
  readonly storeLabel: string;
  /** Distinct client names kept as labels; later names count as `other`. Default 1000. */
  readonly maxClients?: number;
  /** Distinct client names one owner may add to the labels; default 20. */
  readonly maxClientsPerOwner?: number;
  /** 2025-11-25 sessions whose client name is remembered; default 10 000. */
  readonly maxSessions?: number;
  /** Node's process metrics (`process_*`, `nodejs_*`); default on. */
  readonly processMetrics?: boolean;
  /** The wall clock; default `Date.now`. */
  readonly now?: () => number;
}

/** What {@link DemoMetrics.attach} reads at scrape time. */
export interface MetricSources {
  /** The change feed (running tasks, queue depth). */
  readonly service: Pick<TaskService, "watch">;
  /** The runner's counters. */
  readonly runner: { readonly stats: RunnerStats };
  /** Tool names used as labels; any other tool counts as `other`. */
  readonly toolNames: readonly string[];
  /** Open 2025-11-25 sessions, when the legacy era is served. */
  readonly legacySessions?: () => number | undefined;
}

/**
 * The demo's Prometheus metrics, in a registry of its own (never prom-client's global
 * one, so that several apps and the tests in one process do not collide):
 *
 * - `mcp_requests_total{era, client}` and `mcp_legacy_sessions` (the migration view),
 * - the runner's `mcp_tasks_claims_total`, `mcp_tasks_runs_*`,
 * - task lifecycle metrics ({@link TaskMetrics}),
 * - `mcp_store_operation_duration_seconds{op, store}`, `mcp_store_errors_total{op, store, code}`
 *   from {@link instrumentStore},
 * - Node's default process metrics.
 *
 * Every label value is bounded: eras and statuses are closed sets, tools are the known
 * tools or `other`, clients are capped, error codes are the closed `TaskErrorCode`
 * vocabulary or `internal`.
 */
export class DemoMetrics {
  /** The registry `/metrics` renders. */
  readonly registry = new Registry();
  readonly requests: RequestMetrics;
  readonly tasks: TaskMetrics;
  readonly #storeLabel: string;
  readonly #storeSeconds: LabelledHistogram<"op">;
  readonly #storeErrors: Counter<"op" | "store" | "code">;
  readonly #limitRefusals: Counter<"reason">;
  #toolNames: ReadonlySet<string> = new Set();
  #sources: MetricSources | undefined;
  #unwatch: Unsubscribe | undefined;

  constructor(options: DemoMetricsOptions) {
    const registry = this.registry;
    const registers = [registry];
    this.#storeLabel = options.storeLabel;
    this.requests = new RequestMetrics({
      registry,
      ...(options.maxClients !== undefined && { maxClients: options.maxClients }),
      ...(options.maxClientsPerOwner !== undefined && {
        maxClientsPerOwner: options.maxClientsPerOwner,
      }),
      ...(options.maxSessions !== undefined && { maxSessions: options.maxSessions }),
      ...(options.now !== undefined && { now: options.now }),
    });
    this.tasks = new TaskMetrics({
      registry,
      toolLabel: (name) => (this.#toolNames.has(name) ? name : "other"),
      ...(options.now !== undefined && { now: options.now }),
    });
    this.#storeSeconds = new LabelledHistogram({
      name: "mcp_store_operation_duration_seconds",
      help: "Task store calls made by this node, by operation and store, successful or not.",
      labelNames: ["op"],
      constLabels: { store: options.storeLabel },
      buckets: STORE_BUCKETS,
      registry,
    });
    this.#storeErrors = new Counter({
      name: "mcp_store_errors_total",
      help: "Task store calls that failed, by operation, store and task error code.",
      labelNames: ["op", "store", "code"],
      registers,
    });
    this.#limitRefusals = new Counter({
      name: "mcp_limit_refusals_total",
      help: "Requests refused by a per-owner limit (rate, sessions, listen streams and task ids, tasks/result waits, console live views), by reason.",
      labelNames: ["reason"],
      registers,
    });
    const sessions = () => this.#sources?.legacySessions?.();
    new Gauge({
      name: "mcp_legacy_sessions",
      help: "Open 2025-11-25 sessions on this node.",
      registers,
      collect() {
        this.set(sessions() ?? 0);
      },
    });
    const stats = () => this.#sources?.runner.stats;
    runnerCounter(
      registry,
      "mcp_tasks_claims_total",
      "Tasks this node claimed from the queue.",
      () => stats()?.claimed,
    );
    runnerCounter(
      registry,
      "mcp_tasks_runs_started_total",
      "Task runs started on this node.",
      () => stats()?.started,
    );
    runnerCounter(
      registry,
      "mcp_tasks_runs_superseded_total",
      "Runs stopped because another node took the task over.",
      () => stats()?.superseded,
    );
    runnerCounter(
      registry,
      "mcp_tasks_runs_handed_back_total",
      "Runs handed back to the queue on shutdown.",
      () => stats()?.handedBack,
    );
    new Gauge({
      name: "mcp_tasks_runs_running",
      help: "Task handlers running on this node now.",
      registers,
      collect() {
        this.set(stats()?.running ?? 0);
      },
    });
    if (options.processMetrics ?? true) collectDefaultMetrics({ register: registry });
  }

  /**
   * The store, timed and observed (store metrics, and the lifecycle metrics of this node's
   * writes). Has the queue methods exactly when `store` has them.
   */
  instrumentStore(store: TaskQueueStore): TaskQueueStore;
  instrumentStore(store: TaskStore): TaskStore;
  instrumentStore(store: TaskStore): TaskStore {
    return instrumentStore(store, {
      settled: (op, seconds, failure) => this.#storeCall(op, seconds, failure),
      succeeded: (call) => this.tasks.observe(call),
    });
  }

  /** Connects the sources read at scrape time and subscribes to the change feed. */
  attach(sources: MetricSources): void {
    this.#unwatch?.();
    this.#sources = sources;
    this.#toolNames = new Set(sources.toolNames);
    this.#unwatch = sources.service.watch((change) => this.tasks.onChange(change));
  }

  /** Stops following the change feed. */
  detach(): void {
    this.#unwatch?.();
    this.#unwatch = undefined;
  }

  /** Counts one request of `era` from client `name`; see {@link RequestMetrics.count}. */
  count(era: Era, name: string, ownerKey?: string): void {
    this.requests.count(era, name, ownerKey);
  }

  /**
   * Counts one refusal by a per-owner limit; `reason` is one of a closed set (the edge's
   * `data.reason` values and the console's `console_live_views_owner` / `_all`).
   */
  countLimitRefusal(reason: LimitRefusalReason): void {
    this.#limitRefusals.inc({ reason });
  }

  /** See {@link RequestMetrics.bindSession}. */
  bindSession(sessionId: string, name: string): void {
    this.requests.bindSession(sessionId, name);
  }

  /** See {@link RequestMetrics.sessionClient}. */
  sessionClient(sessionId: string | null): string {
    return this.requests.sessionClient(sessionId);
  }

  /** See {@link RequestMetrics.endSession}. */
  endSession(sessionId: string): void {
    this.requests.endSession(sessionId);
  }

  /** Requests per era and per client, now and over recent minutes (plain data). */
  trafficSnapshot(): TrafficSnapshot {
    return this.requests.trafficSnapshot();
  }

  /** The Content-Type of {@link render}'s output. */
  get contentType(): string {
    return this.registry.contentType;
  }

  /** Every metric in the Prometheus text exposition format. */
  render(): Promise<string> {
    return this.registry.metrics();
  }

  #storeCall(op: StoreOperation, seconds: number, failure: { error: unknown } | null): void {
    const store = this.#storeLabel;
    this.#storeSeconds.observe({ op }, seconds);
    if (failure !== null) {
      const code = isTaskError(failure.error) ? failure.error.code : "internal";
      this.#storeErrors.inc({ op, store, code });
    }
  }
}

/** A counter that mirrors a runner statistic at scrape time. */
function runnerCounter(
  registry: Registry,
  name: string,
  help: string,
  read: () => number | undefined,
): void {
  let seen = 0;
  new Counter({
    name,
    help,
    registers: [registry],
    collect() {
      const value = read() ?? 0;
      if (value >= seen) {
        this.inc(value - seen);
      } else {
        // A statistic never goes down unless its runner was replaced: start over.
        this.reset();
        this.inc(value);
      }
      seen = value;
    },
  });
}

/** A `store` label for a store whose kind the caller did not name. */
export function storeLabelOf(store: TaskStore): string {
  const name = store.constructor?.name ?? "";
  if (name === "MemoryTaskStore") return "memory";
  if (name === "DrizzleTaskStore") return "drizzle";
  return "custom";
}
