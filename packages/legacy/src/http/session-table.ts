import type { Clock } from "@mcp-tasks/core";

/** What the table needs of a session. */
export interface TableSession {
  /** When the session last saw a request. */
  readonly lastSeen: number;
  /** True while a stream is open, so the session is in use whatever its last request. */
  readonly busy: boolean;
  close(): Promise<void>;
}

/**
 * The open sessions of one endpoint by id, bounded by `maxSessions`, with an idle sweep:
 * a session that has seen no request for `idleMs` and has no open stream is closed (a
 * client that never sends DELETE would otherwise hold its slot forever).
 */
export class SessionTable<S extends TableSession> {
  readonly #sessions = new Map<string, S>();
  readonly #maxSessions: number;
  readonly #idleMs: number;
  readonly #clock: Clock;
  readonly #sweeper: NodeJS.Timeout | undefined;
  readonly #onRemoved: (id: string) => void;

  constructor(options: {
    maxSessions: number;
    idleMs: number;
    clock: Clock;
    /** Told when a session leaves the table (closed, swept idle, or all closed). */
    onRemoved?: (id: string) => void;
  }) {
    this.#maxSessions = options.maxSessions;
    this.#onRemoved = options.onRemoved ?? (() => {});
    this.#idleMs = options.idleMs;
    this.#clock = options.clock;
    if (this.#idleMs > 0) {
      this.#sweeper = setInterval(() => void this.closeIdle(), Math.min(this.#idleMs, 60_000));
      this.#sweeper.unref();
    }
  }

  get size(): number {
    return this.#sessions.size;
  }

  /** True when no further session may open. */
  get full(): boolean {
    return this.#sessions.size >= this.#maxSessions;
  }

  get(id: string): S | undefined {
    return this.#sessions.get(id);
  }

  add(id: string, session: S): void {
    this.#sessions.set(id, session);
  }

  /** Forgets `id` if it still names `session` (a newer session may have taken the id). */
  remove(id: string, session: S): void {
    if (this.#sessions.get(id) === session) {
      this.#sessions.delete(id);
      this.#onRemoved(id);
    }
  }

  /** Closes the sessions idle past the timeout now; resolves with how many. */
  async closeIdle(): Promise<number> {
    if (this.#idleMs <= 0) return 0;
    const now = this.#clock.now();
    const idle = [...this.#sessions.entries()].filter(
      ([, s]) => !s.busy && now - s.lastSeen >= this.#idleMs,
    );
    for (const [id] of idle) {
      this.#sessions.delete(id);
      this.#onRemoved(id);
    }
    await Promise.allSettled(idle.map(([, s]) => s.close()));
    return idle.length;
  }

  /** Stops the sweep and closes every session. */
  async closeAll(): Promise<void> {
    if (this.#sweeper !== undefined) clearInterval(this.#sweeper);
    const all = [...this.#sessions.values()];
    const ids = [...this.#sessions.keys()];
    this.#sessions.clear();
    for (const id of ids) this.#onRemoved(id);
    await Promise.allSettled(all.map((s) => s.close()));
  }
}
