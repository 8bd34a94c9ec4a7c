/** The settings, inputs and counters of a {@link TaskRunner}. */

import type { Tracer } from "@opentelemetry/api";
import type { TaskService } from "./service.js";
import type { CreateTaskInput } from "./service-options.js";
import type { TaskHandler } from "./task-context.js";
import type { ToolDefinition } from "./tool.js";

/** What {@link TaskRunner.start} needs: the task to create, named by its tool. */
export interface StartTaskInput extends CreateTaskInput {
  /**
   * Runs this task here instead of the registered tool of `request.toolName`. Only this
   * node knows a closure: if the task is re-run elsewhere (its worker was lost), that node
   * runs the registered tool. Prefer registering tools.
   */
  readonly handler?: TaskHandler;
}

/** What a runner has done since it started, for metrics. */
export interface RunnerStats {
  /** Tasks this node claimed from the queue (created-and-claimed ones not included). */
  readonly claimed: number;
  /** Runs started here (claimed from the queue or at creation). */
  readonly started: number;
  /** Runs stopped because another run took the task over (this run's lease was lost). */
  readonly superseded: number;
  /** Runs handed back to the queue on shutdown. */
  readonly handedBack: number;
  /** Handlers running now. */
  readonly running: number;
  /** The most handlers that ran at once. */
  readonly peakRunning: number;
}

/** Settings of a {@link TaskRunner}. */
export interface TaskRunnerOptions {
  readonly service: TaskService;
  /**
   * The tools this node runs, by name. A claimed task runs the handler registered for its
   * `request.toolName`; the facades register theirs too ({@link TaskRunner.register}).
   */
  readonly tools?: readonly ToolDefinition[];
  /** Told about outcomes that could not be stored after retries; default `console.error`. */
  readonly onError?: (error: unknown, taskId: string) => void;
  /**
   * Attempts to store an outcome while the store is unavailable; default 10 (with the
   * default delays, about 20 s: a database restart or failover, not just a blip).
   */
  readonly settleAttempts?: number;
  /**
   * First retry delay, doubled each attempt up to 5 s; default 100 ms. Also the first wait
   * before a run's own writes (status messages, input requests, lease renewals) are tried
   * again while the store is unavailable: those are retried, doubling up to 1 s, for as long
   * as the run holds its lease, so the handler does not hear of an outage it outlives.
   */
  readonly settleRetryMs?: number;
  /**
   * Every running task is re-read this often in case a change notification was lost (e.g.
   * across a database reconnect), so a cancel request or an answer is never missed for
   * good. Default 30 000 ms; 0 disables.
   */
  readonly recheckMs?: number;
  /**
   * This worker's lease on the tasks it runs: `holder` names it (unique per process;
   * default a random `worker-<pid>-<id>`), the lease lasts `durationMs` (default 30 s) and
   * is renewed every `renewEveryMs` (default a third of it). A task whose lease runs out
   * (the node died or stalled) is re-run elsewhere or failed "Worker lost". A run whose
   * lease runs out because no renewal got through (the store stayed unavailable) stops
   * (its handler's signal aborts with a `RunStoppedError` `lease_expired`), and its task
   * is recovered the same way.
   */
  readonly lease?: {
    readonly holder?: string;
    readonly durationMs?: number;
    readonly renewEveryMs?: number;
  };
  /**
   * Whether this node claims and runs queued tasks (needs a queue store); default true.
   * An HTTP-only node sets `false`: it creates tasks, workers elsewhere run them.
   */
  readonly claim?: boolean;
  /**
   * Most handlers running at once on this node; default 16 per CPU core. A run whose
   * handler has returned and which is only storing its outcome does not count (up to as
   * many again may be doing so), and slots asked for by a claim in flight do.
   */
  readonly concurrency?: number;
  /**
   * Most tasks one owner may have running at once across every node sharing the store
   * (the cap is enforced by the store's claim, atomically, so nodes together never exceed
   * it); a task created to run at once is created queued when its owner is at it. Default:
   * a quarter of `concurrency`, at least 1, so that one owner cannot take a shared node's
   * workers from everyone else. `Infinity` for no cap (a single-tenant server).
   */
  readonly maxRunningPerOwner?: number;
  /**
   * Of one owner's tasks waiting for input (a handler parked in `ctx.requireInput`), this
   * many hold no handler slot and do not count against `maxRunningPerOwner`; beyond it, a
   * waiting task holds its slot and counts as running. Default `concurrency`, or no limit
   * when `maxRunningPerOwner` is `Infinity`. `Infinity` for no limit.
   */
  readonly maxWaitingPerOwner?: number;
  /**
   * How often to look for claimable tasks and recover orphans even without a change
   * notification (which wakes claiming at once); default 500 ms. A dead worker's task is
   * re-run at most this long after its lease ran out (lease + 0.5 s by default), for two
   * cheap statements per interval (the orphan sweep on the lease index, and a claim).
   */
  readonly scanIntervalMs?: number;
  /**
   * Where the run spans (`mcp.task.run`, one per attempt) go; default the service's tracer.
   */
  readonly tracer?: Tracer;
}
