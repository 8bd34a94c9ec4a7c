import type { PGlite } from "@electric-sql/pglite";
import type { TaskChange, TaskChangeKind, TaskStatus } from "@mcp-tasks/core";
import type { Sql } from "postgres";

/*
 * Every notification is a JSON array `[origin, kind, status, version, taskId, kind, status,
 * version, taskId, …]`: no owner and no task data (a watcher re-reads through its own scope),
 * JSON because task ids may hold any character. After-commit batches pack many changes into
 * one payload, since every notification costs each listening connection a protocol message
 * and its node a callback; the in-transaction statements send one change each, built by
 * PostgreSQL's `json_build_array`. Both separate items with ", " as PostgreSQL renders them,
 * so one prefix identifies a store's own payloads whoever built them.
 *
 * An after-commit batch with `queued` changes ends with one more item: an array of each
 * change's tool name (null where it has none), so that a node that does not run a tool
 * sends no claim for its tasks. So does an in-transaction notification that may hold a
 * `queued` change (see `notes` in `plans/context.ts`). A node of an earlier version reads
 * four items at a time and stops before that last one, and a payload without it gives
 * changes without tool names: nodes of both versions understand each other while a cluster
 * is upgraded.
 */

/** PostgreSQL refuses NOTIFY payloads of 8000 bytes or more; stay clear of that. */
const MAX_PAYLOAD_BYTES = 7900;

/** Packs changes into as few payloads as the size limit allows, in order. */
export function packChanges(origin: string, changes: readonly TaskChange[]): string[] {
  const head = `[${JSON.stringify(origin)}`;
  const headBytes = Buffer.byteLength(head);
  const payloads: string[] = [];
  let current = head;
  let bytes = headBytes;
  // The current payload's tool names (JSON), and whether any is not null.
  let tools: string[] = [];
  let named = false;
  const close = () => {
    payloads.push(named ? `${current}, [${tools.join(", ")}]]` : `${current}]`);
    current = head;
    bytes = headBytes;
    tools = [];
    named = false;
  };
  for (const c of changes) {
    const entry = `, ${JSON.stringify(c.kind)}, ${JSON.stringify(c.status)}, ${c.version}, ${JSON.stringify(c.taskId)}`;
    const tool = c.toolName === undefined ? "null" : JSON.stringify(c.toolName);
    // The entry, and its tool name in the last item (", " before it, or ", [" and "]").
    const entryBytes = Buffer.byteLength(entry) + Buffer.byteLength(tool) + 4;
    if (current !== head && bytes + entryBytes + 1 > MAX_PAYLOAD_BYTES) close();
    current += entry;
    bytes += entryBytes;
    tools.push(tool);
    named ||= c.toolName !== undefined;
  }
  if (current !== head) close();
  return payloads;
}

/** The prefix of every payload `origin` sends, to skip one's own without parsing. */
export function payloadPrefix(origin: string): string {
  return `[${JSON.stringify(origin)}, `;
}

/** Unpacks a batch; malformed payloads and entries give nothing (they are ignored). */
export function unpackChanges(payload: string): { origin: string; changes: TaskChange[] } {
  let parsed: unknown;
  try {
    parsed = JSON.parse(payload);
  } catch {
    return { origin: "", changes: [] };
  }
  if (!Array.isArray(parsed) || typeof parsed[0] !== "string") return { origin: "", changes: [] };
  const changes: TaskChange[] = [];
  // The tool names, when the payload ends with them (one item after the last change).
  const last: unknown = parsed.at(-1);
  const tools = (parsed.length - 1) % 4 === 1 && Array.isArray(last) ? last : [];
  for (let i = 1, n = 0; i + 3 < parsed.length; i += 4, n++) {
    const [kind, status, version, taskId] = parsed.slice(i, i + 4) as unknown[];
    if (
      typeof kind === "string" &&
      typeof status === "string" &&
      Number.isSafeInteger(version) &&
      typeof taskId === "string" &&
      taskId.length > 0
    ) {
      const change: { -readonly [K in keyof TaskChange]: TaskChange[K] } = {
        taskId,
        kind: kind as TaskChangeKind,
        status: status as TaskStatus,
        version: version as number,
      };
      // Set in place, not `{ ...change, toolName }`: see "Hot paths" in docs/architecture.md.
      const toolName: unknown = tools[n];
      if (typeof toolName === "string") change.toolName = toolName;
      changes.push(change);
    }
  }
  return { origin: parsed[0], changes };
}

/** Subscribes to a channel; resolves once the subscription is active. */
export type Subscribe = (
  channel: string,
  onPayload: (payload: string) => void,
) => Promise<() => Promise<void>>;

/** LISTEN through postgres.js: a dedicated connection, re-established after a reconnect. */
export function postgresSubscribe(sql: Sql): Subscribe {
  return async (channel, onPayload) => {
    const { unlisten } = await sql.listen(channel, onPayload);
    return async () => {
      await unlisten();
    };
  };
}

/** LISTEN inside PGlite: notifications from the same database instance, in process. */
export function pgliteSubscribe(db: PGlite): Subscribe {
  return async (channel, onPayload) => {
    const unlisten = await db.listen(channel, onPayload);
    return async () => {
      await unlisten();
    };
  };
}

/**
 * Publishes changes after their commit, batched: while one NOTIFY statement is in flight the
 * next changes queue up and go out together in the following one. This is the default on
 * PostgreSQL because a transaction that NOTIFYs takes a database-wide lock until its commit
 * is flushed, which serialises every notifying commit (measured here: ~470 creates/s instead
 * of thousands). The price: a change committed by a node that dies before its batch is sent
 * is never announced; watchers must re-check now and then (TaskService's waits do).
 *
 * Batches are also paced: a batch leaves at once when the previous one left at least
 * `minIntervalMs` ago, otherwise when that interval is up. An isolated change is announced
 * immediately; under a stream of writes there is at most one NOTIFY transaction per interval
 * instead of one per write (each costs the database a transaction and the global notify
 * lock), at the cost of up to `minIntervalMs` of extra wake-up latency for other nodes.
 */
export class BatchedNotifier<T = string> {
  readonly #send: (items: T[]) => Promise<unknown>;
  readonly #maxQueued: number;
  readonly #minIntervalMs: number;
  #queue: T[] = [];
  #inFlight: Promise<void> | null = null;
  #lastSentAt = Number.NEGATIVE_INFINITY;
  #closed = false;
  /** Batches that failed to send (the database was unreachable). */
  failures = 0;
  /** Batches sent (or attempted). */
  batches = 0;

  constructor(
    send: (items: T[]) => Promise<unknown>,
    options: { maxQueued?: number; minIntervalMs?: number } = {},
  ) {
    this.#send = send;
    this.#maxQueued = options.maxQueued ?? 10_000;
    this.#minIntervalMs = Math.max(0, options.minIntervalMs ?? 0);
  }

  publish(item: T): void {
    if (this.#closed) return;
    if (this.#queue.length >= this.#maxQueued) this.#queue.shift();
    this.#queue.push(item);
    if (this.#inFlight === null) this.#inFlight = this.#drain();
  }

  /** Waits until the next batch may leave: the end of this tick, or of the interval. */
  #pace(): Promise<void> {
    const wait = this.#lastSentAt + this.#minIntervalMs - performance.now();
    return new Promise<void>((resolve) => {
      if (wait > 0 && !this.#closed) setTimeout(resolve, wait);
      // Let the operations completing in this tick join the batch.
      else setImmediate(resolve);
    });
  }

  async #drain(): Promise<void> {
    await this.#pace();
    while (this.#queue.length > 0) {
      const batch = this.#queue;
      this.#queue = [];
      this.#lastSentAt = performance.now();
      this.batches++;
      try {
        await this.#send(batch);
      } catch {
        this.failures++;
      }
      if (this.#queue.length > 0) await this.#pace();
    }
    this.#inFlight = null;
  }

  /** Sends what is queued (without waiting out the interval), then stops. */
  async close(): Promise<void> {
    this.#closed = true;
    if (this.#inFlight) await this.#inFlight;
  }
}
