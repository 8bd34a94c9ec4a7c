// The durable-execution half of SdkTaskStore. The SDK runs a task's work in the process that
// created it, where the store cannot see it; so the store holds a lease on each task it
// creates, renews it while this process lives, and sweeps the tasks whose lease ran out:
// core's orphan recovery fails them "Worker lost", as it does a TaskRunner's.

import {
  createIdGenerator,
  isTaskError,
  type Owner,
  type TaskLease,
  type TaskService,
} from "@mcp-tasks/core";

/** How {@link SdkTaskStore} holds the tasks whose work runs in this process. */
export interface SdkLeaseOptions {
  /** This process's name as the lease holder; default a random `sdk-<pid>-<id>`. */
  readonly holder?: string;
  /**
   * How long a task outlives this process, at most, before it is failed "Worker lost";
   * default 30 000 ms (the `TaskRunner`'s default). A process paused for longer loses its
   * tasks the same way.
   */
  readonly durationMs?: number;
  /** Renewal (and orphan sweep) interval; default a third of `durationMs`. */
  readonly renewEveryMs?: number;
  /**
   * Also sweep the store for tasks whose lease ran out (any process's, e.g. the one that
   * ran before a restart) on each renewal; default true. Turn it off when a janitor
   * (`startJanitor`) or a `TaskRunner` on the same store already does.
   */
  readonly recoverOrphans?: boolean;
}

/** Most orphans one sweep recovers (the next sweep takes the rest). */
const SWEEP_BATCH = 100;

/** The tasks this process holds, what it holds them by, and the timer that keeps them. */
export class LeaseKeeper {
  readonly holder: string;
  readonly durationMs: number;
  readonly #service: TaskService;
  readonly #report: (error: unknown) => void;
  readonly #recoverOrphans: boolean;
  /** The running tasks created here: their owner and the fencing token of our run. */
  readonly #held = new Map<string, { owner: Owner; fencingToken: number }>();
  #timer: NodeJS.Timeout | undefined;
  #beating = false;

  constructor(service: TaskService, options: SdkLeaseOptions, report: (error: unknown) => void) {
    this.#service = service;
    this.#report = report;
    this.holder = options.holder ?? `sdk-${process.pid}-${createIdGenerator()().slice(0, 8)}`;
    this.durationMs = options.durationMs ?? 30_000;
    this.#recoverOrphans = options.recoverOrphans ?? true;
    const every = options.renewEveryMs ?? Math.max(1, Math.floor(this.durationMs / 3));
    if (!(Number.isSafeInteger(this.durationMs) && this.durationMs > 0)) {
      throw new RangeError("lease.durationMs must be a positive integer");
    }
    if (!(Number.isSafeInteger(every) && every > 0 && every < this.durationMs)) {
      throw new RangeError("lease.renewEveryMs must be a positive integer below durationMs");
    }
    // Only a queue store keeps leases; on any other a task's fate stays the SDK work's.
    if (!service.queues) return;
    this.#timer = setInterval(() => void this.#beat(), every);
    // A store must never keep the process alive.
    this.#timer.unref();
  }

  /** The lease a new task is created with, or none when the store keeps no leases. */
  lease(): TaskLease | undefined {
    return this.#timer === undefined
      ? undefined
      : { holder: this.holder, durationMs: this.durationMs };
  }

  /** Remembers a task created with {@link lease}, to renew its lease until it ends. */
  hold(taskId: string, owner: Owner, fencingToken: number): void {
    if (this.#timer !== undefined) this.#held.set(taskId, { owner, fencingToken });
  }

  /** Forgets a task that ended here (a task ended elsewhere is dropped at its next renewal). */
  release(taskId: string): void {
    this.#held.delete(taskId);
  }

  /** How many running tasks this process holds. */
  get held(): number {
    return this.#held.size;
  }

  /** Stops renewing: the held tasks end "Worker lost" once their leases run out. */
  stop(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
    this.#held.clear();
  }

  async #beat(): Promise<void> {
    // A slow store must not stack beats up.
    if (this.#beating) return;
    this.#beating = true;
    try {
      await Promise.all([...this.#held].map(([taskId, run]) => this.#renew(taskId, run)));
      if (this.#recoverOrphans && this.#timer !== undefined) {
        await this.#service.recoverOrphans({ limit: SWEEP_BATCH });
      }
    } catch (error) {
      this.#report(error);
    } finally {
      this.#beating = false;
    }
  }

  async #renew(taskId: string, run: { owner: Owner; fencingToken: number }): Promise<void> {
    const writer = this.#service.forRun(run.owner, taskId, {
      holder: this.holder,
      fencingToken: run.fencingToken,
    });
    try {
      // `false`: the task ended (completed, cancelled, failed) or was swept while we stalled.
      if (!(await writer.renewLease(this.durationMs))) this.#held.delete(taskId);
    } catch (error) {
      // Gone (ended and expired, or deleted): nothing left to hold.
      if (isTaskError(error, "not_found_or_unauthorized")) this.#held.delete(taskId);
      else this.#report(error);
    }
  }
}
