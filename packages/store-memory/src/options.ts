import type { Clock } from "@mcp-tasks/core";

/** Settings of a {@link MemoryTaskStore}. */
export interface MemoryTaskStoreOptions {
  /** Time source; default the system clock. */
  readonly clock?: Clock;
  /** Most tasks held at once (live and finished); default 100 000. */
  readonly maxTasks?: number;
  /**
   * Most tasks one owner may hold at once, finished ones included until their ttl ends;
   * default 10 000 (a client creating a task every second keeps 3 600 under a 1 h ttl).
   */
  readonly maxTasksPerOwner?: number;
  /**
   * Most payload bytes one owner's tasks may hold: arguments, results and errors, input
   * answers (UTF-8 of their JSON, core's `taskPayloadBytes`); default 64 MiB. New arguments
   * and answers past it are refused with `store_full`; a run's outcome is always kept, and
   * counted.
   */
  readonly maxBytesPerOwner?: number;
  /** Largest page `list` returns; default 100. */
  readonly maxPageSize?: number;
  /**
   * How often a background sweep removes expired tasks and recovers orphaned ones (see
   * `recoverOrphans`); default 60 000 ms, 0 for never (expired tasks are invisible either
   * way). The timer never keeps the process alive.
   */
  readonly sweepIntervalMs?: number;
}

/** The bounds of a store, its {@link MemoryTaskStoreOptions} with the defaults filled in. */
export interface StoreBounds {
  readonly maxTasks: number;
  readonly maxTasksPerOwner: number;
  readonly maxBytesPerOwner: number;
  /** False without a byte quota: there is nothing to account (it cannot be set later). */
  readonly countBytes: boolean;
  readonly maxPageSize: number;
  /** 0 for no background sweep. */
  readonly sweepIntervalMs: number;
}

/** The bounds `options` sets, each missing one at its default. */
export function resolveBounds(options: MemoryTaskStoreOptions): StoreBounds {
  const maxBytesPerOwner = options.maxBytesPerOwner ?? 64 * 1024 * 1024;
  return {
    maxTasks: options.maxTasks ?? 100_000,
    maxTasksPerOwner: options.maxTasksPerOwner ?? 10_000,
    maxBytesPerOwner,
    countBytes: maxBytesPerOwner !== Number.POSITIVE_INFINITY,
    maxPageSize: options.maxPageSize ?? 100,
    sweepIntervalMs: options.sweepIntervalMs ?? 60_000,
  };
}

/** A page size a caller asked for, within 1 and the store's largest page. */
export function pageLimit(requested: number, bounds: StoreBounds): number {
  return Math.max(1, Math.min(Math.floor(requested) || 1, bounds.maxPageSize));
}
