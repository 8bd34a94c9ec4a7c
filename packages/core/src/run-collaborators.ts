/**
 * The runner's side of a run, as small typed collaborators: the settings every run shares,
 * the slot accounting, where a run reports, and where its outcome is stored.
 */

import type { Tracer } from "@opentelemetry/api";
import type { Run } from "./run.js";
import type { OutcomeWrite } from "./run-outcome.js";
import type { StopReason } from "./run-stop.js";
import type { TaskService } from "./service.js";
import type { TaskProgress } from "./task-context.js";

/** What every run of one runner shares: the store, the worker's name and its timings. */
export interface RunSettings {
  readonly service: TaskService;
  /** This worker's name (the lease holder). */
  readonly holder: string;
  readonly leaseMs: number;
  readonly renewEveryMs: number;
  /** How often the watch re-reads the task in case a change notification was lost. */
  readonly recheckMs: number;
  /** First wait before a run's write is tried again while the store is unavailable. */
  readonly retryMs: number;
  /** Where the run spans go. */
  readonly tracer: Tracer;
}

/** Keeps count of the handler slots: a run tells it when its handler stops needing one. */
export interface RunSlots {
  /** The handler has returned (or thrown): the run holds no slot while it stores its outcome. */
  handlerReturned(run: Run): void;
  /**
   * The handler waits for input (`waiting`, after the question is stored) or goes on (its
   * answers came, or the wait was aborted): a waiting run need not hold a handler slot.
   */
  waitingForInput(run: Run, waiting: boolean): void;
}

/** Where a run reports what the runner tells others: progress, stops, errors. */
export interface RunReports {
  progress(report: TaskProgress): void;
  /** A run stopped without an outcome of its own. */
  stopped(reason: StopReason): void;
  error(error: unknown, taskId: string): void;
}

/** Stores a run's outcome, trying the write again while the store is unavailable. */
export interface OutcomeStore {
  store(run: Run, write: OutcomeWrite): Promise<void>;
}

/** The runner's side of a {@link Run}. */
export interface RunCollaborators {
  readonly settings: RunSettings;
  readonly slots: RunSlots;
  readonly reports: RunReports;
  readonly outcomes: OutcomeStore;
}
