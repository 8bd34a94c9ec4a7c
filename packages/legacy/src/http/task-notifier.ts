import {
  isTaskError,
  isTerminal,
  type Owner,
  type TaskChange,
  type TaskRecord,
  type Unsubscribe,
} from "@mcp-tasks/core";
import type { DeliveryChannel } from "../delivery-channel.js";
import type { LegacyDeps } from "../handlers/deps.js";
import { InputPump } from "../input-pump.js";
import { legacyStatusOf, toLegacyTask } from "../projection.js";
import { type ProgressNotification, ProgressRelay } from "./progress-relay.js";

/** A notification a session sends. */
export type SessionNotification =
  | ProgressNotification
  | { readonly method: "notifications/tasks/status"; readonly params: Record<string, unknown> };

/**
 * Why a notifier's follow stops: a reason of its own, because `abort()` without one builds
 * a `DOMException` and its stack for every task a session creates (3 % of the CPU of a
 * 2025-11-25 task-creating `tools/call`). The follow ends quietly on it (see `#follow`).
 */
const NOTIFIER_STOPPED = Object.freeze(new Error("the task notifier stopped"));

/**
 * When a quiet notifier first reads its task (see `#waitForEnd`), unless the feed told it
 * the end first. Only a task that ended before the watch began needs that read, and that
 * can only happen right after creation; read at once, it was a store read for every task a
 * session created (on PostgreSQL, a fifth of the statements of 2025-11-25 task-creating
 * `tools/call`s). Nobody hears a quiet notifier, so finding that end later changes nothing
 * the client sees: the notifier is only dropped a little later.
 */
const FIRST_CHECK_MS = 1_000;

/** What a {@link TaskNotifier} needs of its session. */
export interface NotifierSession {
  readonly deps: Pick<LegacyDeps, "service" | "runner" | "registry">;
  readonly owner: Owner;
  notify(notification: SessionNotification): void;
  /** Whether notifications reach the client: its standalone stream is open or opening. */
  listening(): boolean;
  /** The session's standalone (GET) stream, while one is open. */
  standaloneChannel(): DeliveryChannel | undefined;
  reportError(error: unknown): void;
}

/**
 * Follows one task a session created and tells the client about it: a
 * `notifications/tasks/status` per status change, progress (see {@link ProgressRelay}),
 * and the task's input requests on the session's standalone stream while no `tasks/result`
 * stream serves them. Ends by itself at the terminal status or when the task is gone.
 *
 * While nobody can hear it (the session has no standalone stream, open or opening) it only
 * waits on the change feed for the end, reading the task only if the end has not come
 * within {@link FIRST_CHECK_MS}: everything it would tell goes on that stream, and
 * following re-reads the task at every change (two to four store reads per task). The
 * session calls {@link listen} when a stream begins to open.
 */
export class TaskNotifier {
  readonly #session: NotifierSession;
  readonly #taskId: string;
  /**
   * Stops the follow; made by the follow. A quiet notifier, the common case (a session
   * without a standalone stream), never follows: making and aborting a signal for it cost
   * 3 % of the CPU of a 2025-11-25 task-creating `tools/call` on the memory store.
   */
  #stop: AbortController | undefined;
  readonly #progress: ProgressRelay | undefined;
  readonly #onEnd: () => void;
  #lastStatus: string;
  #lastMessage: string | undefined;
  #latest: TaskRecord | undefined;
  /** The client has asked about the task, so it can correlate side requests to it. */
  #acknowledged = false;
  #pump: { readonly channel: DeliveryChannel; readonly pump: InputPump } | undefined;
  /** Waiting for the end without reading (see the class comment), until {@link listen}. */
  #quiet: { readonly unwatch: Unsubscribe; readonly recheck: NodeJS.Timeout } | undefined;
  #ended = false;
  readonly #firstCheckMs: number;

  constructor(
    session: NotifierSession,
    created: { taskId: string; status: string; statusMessage?: string | undefined },
    progressToken: string | number | undefined,
    onEnd: () => void,
    /** When a quiet notifier first reads the task (see {@link FIRST_CHECK_MS}). */
    firstCheckMs = FIRST_CHECK_MS,
  ) {
    this.#session = session;
    this.#firstCheckMs = firstCheckMs;
    this.#taskId = created.taskId;
    this.#lastStatus = created.status;
    this.#lastMessage = created.statusMessage;
    this.#onEnd = onEnd;
    this.#progress =
      progressToken === undefined
        ? undefined
        : new ProgressRelay(session.deps.runner, created.taskId, progressToken, (n) =>
            session.notify(n),
          );
    if (session.listening()) void this.#follow();
    else this.#waitForEnd();
  }

  /** The session's standalone stream is opening: follow the task from now on. */
  listen(): void {
    if (this.#quiet === undefined || this.#ended) return;
    this.#stopWaiting();
    void this.#follow();
  }

  /**
   * Side requests are pushed on the session stream only after the client has referred to
   * the task (`tasks/get`): the CreateTaskResult and a pushed request travel on different
   * streams, and a client that sees the request first cannot tell which task it is for.
   */
  acknowledge(): void {
    if (this.#acknowledged) return;
    this.#acknowledged = true;
    this.reroute();
  }

  /** The standalone stream or a `tasks/result` stream came or went: route input again. */
  reroute(): void {
    if (this.#latest !== undefined) this.#routeInput(this.#latest);
  }

  /** Stops following; idempotent. */
  stop(): void {
    this.#stop?.abort(NOTIFIER_STOPPED);
    this.#progress?.stop();
    if (this.#quiet !== undefined) this.#end(false);
  }

  /**
   * Quiet: ends at a terminal or `deleted` change, without a read. A read after
   * {@link FIRST_CHECK_MS} (the task may have ended before the watch began) and one per
   * recheck period (a change notification may be lost, e.g. across a database reconnect)
   * catch what the feed missed; a task that ends before the first is never read.
   */
  #waitForEnd(): void {
    const { deps } = this.#session;
    const unwatch = deps.service.watch((change: TaskChange) => {
      if (change.kind === "deleted" || isTerminal(change.status)) this.#end(true);
    }, this.#taskId);
    const every = deps.service.waitRecheckMs;
    const recheck = setTimeout(() => {
      this.#checkEnded();
      if (every > 0 && this.#quiet !== undefined) {
        const again = setInterval(() => this.#checkEnded(), every);
        again.unref();
        this.#quiet = { unwatch, recheck: again };
      }
    }, this.#firstCheckMs);
    recheck.unref();
    this.#quiet = { unwatch, recheck };
  }

  #checkEnded(): void {
    const { deps, owner } = this.#session;
    deps.service.get(owner, this.#taskId).then(
      (record) => {
        if (this.#quiet !== undefined && isTerminal(record.status)) this.#end(true);
      },
      (error: unknown) => {
        if (this.#quiet === undefined || isTaskError(error, "store_unavailable")) return;
        if (!isTaskError(error, "not_found_or_unauthorized")) this.#session.reportError(error);
        this.#end(true);
      },
    );
  }

  #stopWaiting(): void {
    const quiet = this.#quiet;
    if (quiet === undefined) return;
    this.#quiet = undefined;
    quiet.unwatch();
    // The first check's timeout or the rechecks' interval: either clears both ways.
    clearTimeout(quiet.recheck);
  }

  /** Ends a quiet notifier; `finished`: the task ended or is gone, so its input keys go. */
  #end(finished: boolean): void {
    if (this.#ended) return;
    this.#ended = true;
    this.#stopWaiting();
    if (finished) this.#session.deps.registry.forget(this.#taskId);
    this.stop();
    this.#onEnd();
  }

  async #follow(): Promise<void> {
    const { deps, owner } = this.#session;
    // Reached only while not ended (see `listen`), so no stop came before this controller.
    this.#stop = new AbortController();
    const signal = this.#stop.signal;
    try {
      for await (const record of deps.service.follow(owner, this.#taskId, { signal })) {
        this.#onRecord(record);
      }
    } catch (error) {
      if (!signal.aborted && !isTaskError(error, "not_found_or_unauthorized")) {
        this.#session.reportError(error);
      }
    } finally {
      this.#ended = true;
      this.stop();
      this.#onEnd();
    }
  }

  #onRecord(record: TaskRecord): void {
    this.#latest = record;
    const task = toLegacyTask(record);
    const status = legacyStatusOf(record);
    const terminal = isTerminal(record.status);
    if (!terminal && (status !== this.#lastStatus || task.statusMessage !== this.#lastMessage)) {
      this.#progress?.statusChanged(task.statusMessage);
    }
    if (status !== this.#lastStatus) {
      this.#session.notify({ method: "notifications/tasks/status", params: task });
    }
    this.#lastStatus = status;
    this.#lastMessage = task.statusMessage;
    if (terminal) this.#session.deps.registry.forget(this.#taskId);
    else this.#routeInput(record);
  }

  #routeInput(record: TaskRecord): void {
    const standalone = this.#session.standaloneChannel();
    if (
      record.status !== "input_required" ||
      !this.#acknowledged ||
      standalone === undefined ||
      this.#session.deps.registry.resultChannels(this.#taskId) > 0
    ) {
      return;
    }
    if (this.#pump?.channel !== standalone) {
      const { deps, owner } = this.#session;
      const pump = new InputPump(deps.service, deps.registry, owner, this.#taskId, standalone);
      this.#pump = { channel: standalone, pump };
    }
    this.#pump.pump.offer(record);
  }
}
