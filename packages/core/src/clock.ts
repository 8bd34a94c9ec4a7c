/** A source of the current time in milliseconds since the epoch. Injected everywhere. */
export interface Clock {
  now(): number;
}

/** The wall clock. */
export const systemClock: Clock = Object.freeze({ now: () => Date.now() });

/** A clock that moves only when told to: for deterministic TTL tests. */
export class ManualClock implements Clock {
  #now: number;

  constructor(start = Date.UTC(2026, 0, 1)) {
    this.#now = start;
  }

  now(): number {
    return this.#now;
  }

  /** Moves the clock forward by `ms`. */
  advance(ms: number): void {
    this.#now += ms;
  }

  /** Sets the clock to an absolute time. */
  set(epochMs: number): void {
    this.#now = epochMs;
  }
}
