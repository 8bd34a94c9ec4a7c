import { isTerminal, type TaskChange, type TaskRecord, type TaskStatus } from "@mcp-tasks/core";
import { Counter, Gauge, type Registry } from "prom-client";
import type { StoreCall } from "./instrumented-store.js";
import { LabelledCounter, LabelledHistogram } from "./labelled-metrics.js";

/** Task durations run from milliseconds (sync-ish tools) to hours (reports, jobs). */
const DURATION_BUCKETS = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600];
/** Queue waits: zero when created claimed, up to minutes when every worker is busy. */
const CLAIM_WAIT_BUCKETS = [0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300];

/** Settings of {@link TaskMetrics}. */
export interface TaskMetricsOptions {
  readonly registry: Registry;
  /** A tool name as a bounded label value (known tools, else `other`). */
  readonly toolLabel: (toolName: string) => string;
  /** The wall clock, for the wait before a first claim; default `Date.now`. */
  readonly now?: () => number;
  /** Most running tasks the change-feed census tracks; default 100 000. */
  readonly maxTracked?: number;
  /** Recently cancelled task ids remembered so that each cancellation counts once; 10 000. */
  readonly maxRecentCancels?: number;
}

/** What the change-feed census knows of a running task. */
interface Tracked {
  status: TaskStatus;
  queued: boolean;
  version: number;
}

/**
 * Task lifecycle metrics. Two sources, each used for what it can tell without breaking the
 * layering:
 *
 * - **What this node did**, from the results of its store calls (the instrumented store):
 *   tasks created, finished, their durations, waits before the first claim, input rounds,
 *   cancellations, orphans recovered. Each event is counted once, by the node that made
 *   the write, so summing over nodes gives the service's totals. The records carry the tool
 *   and era, which the change feed does not.
 * - **What the store holds**, from its change feed (every owner's tasks, and on a shared
 *   store every node's): tasks running and the queue depth. These are gauges of the whole
 *   store, the same on every node (take `max`, not `sum`, across nodes). A task that was
 *   running before this node started is counted from its first change after that.
 */
export class TaskMetrics {
  readonly #toolLabel: (toolName: string) => string;
  readonly #now: () => number;
  readonly #maxTracked: number;
  readonly #maxRecentCancels: number;
  readonly #tracked = new Map<string, Tracked>();
  readonly #recentCancels = new Set<string>();
  // Counted on every task (its creation, its end): the labelled metrics, cheap per call.
  readonly #created: LabelledCounter<"era" | "tool">;
  readonly #finished: LabelledCounter<"status" | "tool">;
  readonly #duration: LabelledHistogram<"status" | "tool">;
  readonly #claimWait: LabelledHistogram<"tool">;
  readonly #inputRounds: Counter<"tool">;
  readonly #cancellations: Counter<"era" | "tool" | "mode">;
  readonly #orphans: Counter<"outcome">;

  constructor(options: TaskMetricsOptions) {
    this.#toolLabel = options.toolLabel;
    this.#now = options.now ?? Date.now;
    this.#maxTracked = options.maxTracked ?? 100_000;
    this.#maxRecentCancels = options.maxRecentCancels ?? 10_000;
    const registry = options.registry;
    const registers = [registry];
    this.#created = new LabelledCounter({
      name: "mcp_tasks_created_total",
      help: "Tasks created through this node, by protocol era and tool.",
      labelNames: ["era", "tool"],
      registry,
    });
    this.#finished = new LabelledCounter({
      name: "mcp_tasks_finished_total",
      help: "Tasks this node moved to a terminal status (orphans its sweeps failed included), by status and tool.",
      labelNames: ["status", "tool"],
      registry,
    });
    this.#duration = new LabelledHistogram({
      name: "mcp_tasks_duration_seconds",
      help: "Creation to terminal status of the tasks this node finished (orphans its sweeps failed included), by status and tool.",
      labelNames: ["status", "tool"],
      buckets: DURATION_BUCKETS,
      registry,
    });
    this.#claimWait = new LabelledHistogram({
      name: "mcp_tasks_time_to_first_claim_seconds",
      help: "Creation to first claim by a worker (0 when created claimed), by tool.",
      labelNames: ["tool"],
      buckets: CLAIM_WAIT_BUCKETS,
      registry,
    });
    this.#inputRounds = new Counter({
      name: "mcp_tasks_input_rounds_total",
      help: "Input requests rounds (input_required) started by tasks on this node, by tool.",
      labelNames: ["tool"],
      registers,
    });
    this.#cancellations = new Counter({
      name: "mcp_tasks_cancellations_total",
      help: "Cancellations accepted by this node: mode cooperative (a request the handler acknowledges) or immediate.",
      labelNames: ["era", "tool", "mode"],
      registers,
    });
    this.#orphans = new Counter({
      name: "mcp_tasks_orphans_recovered_total",
      help: "Tasks whose worker was lost, recovered by this node: requeued, failed, or cancelled (a cancel was requested).",
      labelNames: ["outcome"],
      registers,
    });
    const tracked = this.#tracked;
    new Gauge({
      name: "mcp_tasks_running",
      help: "Running tasks in the store (all owners and nodes), by status.",
      labelNames: ["status"],
      registers,
      collect() {
        let working = 0;
        let inputRequired = 0;
        for (const task of tracked.values()) {
          if (task.status === "input_required") inputRequired++;
          else working++;
        }
        this.set({ status: "working" }, working);
        this.set({ status: "input_required" }, inputRequired);
      },
    });
    new Gauge({
      name: "mcp_tasks_queue_depth",
      help: "Running tasks in the store waiting for a worker to claim them.",
      registers,
      collect() {
        let queued = 0;
        for (const task of tracked.values()) if (task.queued) queued++;
        this.set(queued);
      },
    });
  }

  /** Observes one successful store call of this node. */
  observe(call: StoreCall): void {
    switch (call.op) {
      case "create": {
        const task = call.result;
        this.#created.inc({ era: task.era, tool: this.#tool(task) });
        // Created claimed by this node: no wait in the queue at all.
        if (task.execution.holder !== null && task.execution.fencingToken === 1) {
          this.#claimWait.observe({ tool: this.#tool(task) }, 0);
        }
        return;
      }
      case "claim":
        for (const task of call.result) {
          if (task.execution.fencingToken !== 1) continue; // a retry or a take-over
          const waited = Math.max(0, this.#now() - task.createdAt) / 1000;
          this.#claimWait.observe({ tool: this.#tool(task) }, waited);
        }
        return;
      case "complete":
      case "fail":
        this.#finish(call.result);
        return;
      case "markCancelled":
        this.#finish(call.result);
        // Set by this very write: nobody had asked before, so this is an immediate cancel.
        if (call.result.cancelRequestedAt === call.result.lastUpdatedAt) {
          this.#cancelled(call.result, "immediate");
        }
        return;
      case "requestCancel": {
        const task = call.result;
        // A repeated request returns the task unchanged; only the one that set it counts.
        if (!isTerminal(task.status) && task.cancelRequestedAt === task.lastUpdatedAt) {
          this.#cancelled(task, "cooperative");
        }
        return;
      }
      case "requireInput":
        this.#inputRounds.inc({ tool: this.#tool(call.result) });
        return;
      case "recoverOrphans": {
        const { requeued, failed, failedTasks, cancelled, cancelledTasks } = call.result;
        if (requeued > 0) this.#orphans.inc({ outcome: "requeued" }, requeued);
        if (failed > 0) this.#orphans.inc({ outcome: "failed" }, failed);
        if (cancelled > 0) this.#orphans.inc({ outcome: "cancelled" }, cancelled);
        // Failed "Worker lost", or cancelled as requested, by this node's sweep: finished
        // like any other terminal write.
        for (const task of failedTasks) this.#finish(task);
        for (const task of cancelledTasks) this.#finish(task);
        return;
      }
      default:
        return;
    }
  }

  /** Follows one change-feed event into the running / queued census. */
  onChange(change: TaskChange): void {
    if (change.kind === "deleted" || isTerminal(change.status)) {
      this.#tracked.delete(change.taskId);
      return;
    }
    let task = this.#tracked.get(change.taskId);
    if (task === undefined) {
      if (this.#tracked.size >= this.#maxTracked) return;
      task = { status: change.status, queued: false, version: change.version };
      this.#tracked.set(change.taskId, task);
    } else if (change.version < task.version) {
      return; // a late event from another node: the census already knows better
    }
    task.status = change.status;
    task.version = change.version;
    if (change.kind === "queued") task.queued = true;
    else if (change.kind === "claimed") task.queued = false;
  }

  #finish(task: TaskRecord): void {
    const labels = { status: task.status, tool: this.#tool(task) };
    this.#finished.inc(labels);
    this.#duration.observe(labels, Math.max(0, task.lastUpdatedAt - task.createdAt) / 1000);
  }

  #cancelled(task: TaskRecord, mode: "cooperative" | "immediate"): void {
    // The worker's acknowledgement of a request made here may land in the same millisecond.
    if (this.#recentCancels.has(task.taskId)) return;
    this.#recentCancels.add(task.taskId);
    if (this.#recentCancels.size > this.#maxRecentCancels) {
      const oldest = this.#recentCancels.values().next();
      if (!oldest.done) this.#recentCancels.delete(oldest.value);
    }
    this.#cancellations.inc({ era: task.era, tool: this.#tool(task), mode });
  }

  #tool(task: TaskRecord): string {
    return this.#toolLabel(task.request.toolName);
  }
}
