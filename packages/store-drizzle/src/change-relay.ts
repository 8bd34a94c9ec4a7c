import type {
  TaskChange,
  TaskChangeKind,
  TaskChangeListener,
  TaskRecord,
  TaskStatus,
  Unsubscribe,
} from "@mcp-tasks/core";
import { ChangeFeed, changeOf } from "@mcp-tasks/core/store";
import { mapDriverError } from "./errors.js";
import type { Row } from "./executor.js";
import {
  type BatchedNotifier,
  packChanges,
  payloadPrefix,
  type Subscribe,
  unpackChanges,
} from "./feed.js";

/** What the relay needs of a store's backend (see `StoreBackend`). */
export interface RelayLink {
  readonly subscribe: Subscribe;
  readonly sendNotifications: ((channel: string, payloads: string[]) => Promise<unknown>) | null;
  readonly createNotifier: (
    send: (changes: TaskChange[]) => Promise<unknown>,
  ) => BatchedNotifier<TaskChange>;
}

/**
 * A store's changes, to its own watchers and to other nodes', over LISTEN/NOTIFY. This
 * store's changes reach its watchers when the write returns, in order, like the memory
 * store's; other nodes hear them from the writing statements themselves (in-transaction
 * mode) or from a batch sent right after commit (after-commit mode, see `BatchedNotifier`).
 * Other nodes' changes arrive on the store's LISTEN and go to its watchers; its own come
 * back too and are skipped unread.
 */
export class ChangeRelay {
  /** This store's id, carried in each notification. */
  readonly origin = Math.random().toString(36).slice(2, 10).padEnd(8, "0");
  readonly #channel: string;
  readonly #link: RelayLink;
  /** How this store's own notifications start. */
  readonly #ownPrefix = payloadPrefix(this.origin);
  readonly #feed = new ChangeFeed();
  readonly #pending: TaskChange[] = [];
  /** After-commit batches; null when the statements notify in their transaction. */
  readonly #notifier: BatchedNotifier<TaskChange> | null;
  #unlisten: (() => Promise<void>) | null = null;
  #stopped = false;

  constructor(link: RelayLink, channel: string, inTransaction: boolean) {
    this.#link = link;
    this.#channel = channel;
    const send = link.sendNotifications;
    this.#notifier =
      inTransaction || send === null
        ? null
        : link.createNotifier((changes) => send(channel, packChanges(this.origin, changes)));
  }

  /** Starts listening for other nodes' changes. */
  async listen(): Promise<void> {
    try {
      this.#unlisten = await this.#link.subscribe(this.#channel, (payload) =>
        this.#onNotification(payload),
      );
    } catch (error) {
      throw mapDriverError(error, "listen");
    }
  }

  watch(listener: TaskChangeListener, taskId?: string): Unsubscribe {
    return this.#feed.watch(listener, taskId);
  }

  /** Announces `kind` of `record` and returns the record. */
  changed(record: TaskRecord, kind: TaskChangeKind): TaskRecord {
    this.emit(changeOf(record, kind));
    return record;
  }

  /** Announces `kind` of a written row (its id, status and version). */
  changedRow(row: Row, kind: TaskChangeKind): void {
    this.emit({
      taskId: row.id as string,
      kind,
      status: row.status as TaskStatus,
      version: Number(row.version),
    });
  }

  emit(change: TaskChange): void {
    this.#notifier?.publish(change);
    this.#deliver(change);
  }

  /** Stops delivering to watchers (the store is closing); announcing goes on until {@link close}. */
  stopDelivering(): void {
    this.#stopped = true;
    this.#feed.clear();
  }

  /** Sends the announcements still queued, then stops listening. */
  async close(): Promise<void> {
    await this.#notifier?.close();
    const unlisten = this.#unlisten;
    this.#unlisten = null;
    await unlisten?.().catch(() => {});
  }

  #deliver(change: TaskChange): void {
    if (!this.#feed.hasListeners(change.taskId)) return;
    // After the current operation returns, in order, like the memory store.
    this.#pending.push(change);
    if (this.#pending.length === 1) queueMicrotask(() => this.#flush());
  }

  #flush(): void {
    for (const change of this.#pending.splice(0)) this.#feed.emit(change);
  }

  #onNotification(payload: string): void {
    // Our own changes were delivered locally when the write returned.
    if (this.#stopped || payload.startsWith(this.#ownPrefix)) return;
    for (const change of unpackChanges(payload).changes) this.#deliver(change);
  }
}
