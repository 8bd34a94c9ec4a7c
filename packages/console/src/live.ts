import type { ServerResponse } from "node:http";
import { type Clock, isTaskError, type TaskChange, type TaskRecord } from "@mcp-tasks/core";
import { BASE_HEADERS } from "./http.js";
import type { ObservedChange } from "./views.js";

/** How a stream reads a task as its viewer (its owner scope, or the operator's read). */
export type ViewerRead = (taskId: string) => Promise<TaskRecord>;

/** What a stream sends when a visible task changes. */
export type RowOf = (task: TaskRecord) => unknown;

/** Settings of a {@link LiveHub}. */
export interface LiveHubOptions {
  readonly clock: Clock;
  /** Tasks whose observed changes are remembered for the history (oldest forgotten first). */
  readonly historyTasks: number;
  /** Changes remembered per task. */
  readonly historyPerTask: number;
  /** Most open event streams; more are refused (429). */
  readonly maxStreams: number;
  /** Most open event streams of one owner (operators are not counted per owner). */
  readonly maxStreamsPerOwner: number;
  /** Streams kept for operators: owners together open at most `maxStreams` minus this. */
  readonly operatorReserve: number;
  /** Interval of the keep-alive comment on idle streams. */
  readonly heartbeatMs: number;
}

/** Ids a stream may still be waiting to re-read before it gives up and asks for a resync. */
const MAX_PENDING = 500;
/** Unsent bytes after which a stream whose reader stalled is closed. */
const MAX_BUFFERED = 1 << 20;

/** One open server-sent-events stream of one viewer. */
class EventStream {
  readonly #res: ServerResponse;
  readonly #read: ViewerRead;
  readonly #row: RowOf;
  readonly #pending = new Set<string>();
  /** Ids this stream has shown, so that their deletion is reported to it alone. */
  readonly #shown = new Set<string>();
  readonly #heartbeat: NodeJS.Timeout;
  readonly #onClose: () => void;
  readonly operator: boolean;
  /** The owner key of an owner's stream; `null` for an operator's. */
  readonly ownerKey: string | null;
  #flushing = false;
  #closed = false;

  constructor(
    res: ServerResponse,
    ownerKey: string | null,
    read: ViewerRead,
    row: RowOf,
    heartbeatMs: number,
    onClose: () => void,
  ) {
    this.#res = res;
    this.operator = ownerKey === null;
    this.ownerKey = ownerKey;
    this.#read = read;
    this.#row = row;
    this.#onClose = onClose;
    res.writeHead(200, {
      ...BASE_HEADERS,
      "content-type": "text/event-stream; charset=utf-8",
      "x-accel-buffering": "no",
    });
    res.write(": connected\n\n");
    this.#heartbeat = setInterval(() => this.#write(": ping\n\n"), heartbeatMs);
    this.#heartbeat.unref();
    res.on("close", () => this.close());
  }

  /** A task changed: re-read it as this viewer, soon, once however often it changed. */
  changed(change: TaskChange): void {
    if (this.#closed) return;
    if (change.kind === "deleted") {
      if (this.#shown.delete(change.taskId)) this.send("gone", { taskId: change.taskId });
      return;
    }
    if (this.#pending.size >= MAX_PENDING) {
      // Too far behind to catch up task by task: the page reloads its list instead.
      this.#pending.clear();
      this.send("resync", {});
      return;
    }
    this.#pending.add(change.taskId);
    if (!this.#flushing) {
      this.#flushing = true;
      setImmediate(() => void this.#flush());
    }
  }

  async #flush(): Promise<void> {
    try {
      while (this.#pending.size > 0 && !this.#closed) {
        const [taskId] = this.#pending;
        this.#pending.delete(taskId!);
        try {
          const task = await this.#read(taskId!);
          if (this.#shown.size > 10_000) this.#shown.clear();
          this.#shown.add(task.taskId);
          this.send("task", this.#row(task));
        } catch (error) {
          if (isTaskError(error, "not_found_or_unauthorized")) {
            // Not this viewer's task (or gone): say so only if this stream showed it.
            if (this.#shown.delete(taskId!)) this.send("gone", { taskId });
          } else {
            this.send("resync", {});
          }
        }
      }
    } finally {
      this.#flushing = false;
    }
  }

  send(event: string, data: unknown): void {
    this.#write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
  }

  #write(text: string): void {
    if (this.#closed) return;
    if (this.#res.writableLength > MAX_BUFFERED) {
      this.close();
      return;
    }
    this.#res.write(text);
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    clearInterval(this.#heartbeat);
    this.#pending.clear();
    if (!this.#res.writableEnded) this.#res.end();
    this.#onClose();
  }
}

/**
 * The console's one subscription to the change feed: it remembers recent changes per task
 * (the detail panel's history) and fans every change out to the open event streams, each
 * of which re-reads the task through its own viewer's scope before sending anything (a
 * change event carries no owner, so nothing leaks on the way).
 */
export class LiveHub {
  readonly #options: LiveHubOptions;
  readonly #streams = new Set<EventStream>();
  /** Open owner streams per owner key, and in all (operators' streams are not in them). */
  readonly #perOwner = new Map<string, number>();
  #ownerStreams = 0;
  readonly #history = new Map<string, ObservedChange[]>();
  readonly #unwatch: () => void;

  constructor(
    watch: (listener: (change: TaskChange) => void) => () => void,
    options: LiveHubOptions,
  ) {
    this.#options = options;
    this.#unwatch = watch((change) => this.#changed(change));
  }

  /** Open event streams. */
  get streams(): number {
    return this.#streams.size;
  }

  /** The changes observed for a task, oldest first. */
  observed(taskId: string): readonly ObservedChange[] {
    return this.#history.get(taskId) ?? [];
  }

  /**
   * Opens an event stream on `res` for an owner (its `ownerKey`) or an operator (`null`):
   * `"opened"`, or which limit refused it: `"owner"` (this owner's streams), `"all"` (every
   * stream, or for an owner every stream but the operators' reserve).
   */
  open(
    res: ServerResponse,
    ownerKey: string | null,
    read: ViewerRead,
    row: RowOf,
  ): "opened" | "owner" | "all" {
    const { maxStreams, maxStreamsPerOwner, operatorReserve } = this.#options;
    if (ownerKey === null) {
      if (this.#streams.size >= maxStreams) return "all";
    } else {
      if ((this.#perOwner.get(ownerKey) ?? 0) >= maxStreamsPerOwner) return "owner";
      if (this.#ownerStreams >= Math.max(0, maxStreams - operatorReserve)) return "all";
      if (this.#streams.size >= maxStreams) return "all";
    }
    const stream: EventStream = new EventStream(
      res,
      ownerKey,
      read,
      row,
      this.#options.heartbeatMs,
      () => this.#closed(stream),
    );
    this.#streams.add(stream);
    if (ownerKey !== null) {
      this.#ownerStreams += 1;
      this.#perOwner.set(ownerKey, (this.#perOwner.get(ownerKey) ?? 0) + 1);
    }
    return "opened";
  }

  #closed(stream: EventStream): void {
    if (!this.#streams.delete(stream) || stream.ownerKey === null) return;
    this.#ownerStreams -= 1;
    const left = (this.#perOwner.get(stream.ownerKey) ?? 1) - 1;
    if (left > 0) this.#perOwner.set(stream.ownerKey, left);
    else this.#perOwner.delete(stream.ownerKey);
  }

  /** Sends an event to every operator stream (traffic samples). */
  toOperators(event: string, data: unknown): void {
    for (const stream of this.#streams) if (stream.operator) stream.send(event, data);
  }

  close(): void {
    this.#unwatch();
    for (const stream of [...this.#streams]) stream.close();
    this.#history.clear();
  }

  #changed(change: TaskChange): void {
    this.#remember(change);
    for (const stream of this.#streams) stream.changed(change);
  }

  #remember(change: TaskChange): void {
    if (change.kind === "deleted") {
      this.#history.delete(change.taskId);
      return;
    }
    let list = this.#history.get(change.taskId);
    if (list === undefined) {
      if (this.#history.size >= this.#options.historyTasks) {
        const oldest = this.#history.keys().next();
        if (!oldest.done) this.#history.delete(oldest.value);
      }
      list = [];
      this.#history.set(change.taskId, list);
    }
    if (list.length >= this.#options.historyPerTask) list.shift();
    list.push({
      at: this.#options.clock.now(),
      kind: change.kind,
      status: change.status,
      version: change.version,
    });
  }
}
