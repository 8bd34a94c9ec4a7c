/**
 * A run's input rounds: the questions its handler asks (`ctx.requireInput`), stored under
 * keys that are fresh for the task yet the same on a re-run (so an earlier run's answers
 * are reused, not asked again), and the answers handed to the waiting calls as they come.
 */

import { isTaskError } from "./errors.js";
import type { RunWriter } from "./run-writer.js";
import type { InputRequest, InputResponse, TaskRecord } from "./task.js";

/** What a run's input rounds need from the run. */
export interface InputRoundsHost {
  /** The run's signal: a wait for answers ends when it fires. */
  readonly signal: AbortSignal;
  readonly writer: RunWriter;
  /** Makes one of the run's writes, tried again through a store outage while the run holds its lease. */
  keepTrying<T>(write: () => Promise<T>): Promise<T>;
  /** The questions `keys` were stored; the task's status is now `status`. */
  asked(keys: readonly string[], status: TaskRecord["status"]): void;
  /** The answers to `keys` were handed to the handler. */
  answered(keys: readonly string[]): void;
  /** The handler waits for stored questions (`true`), or goes on (`false`). */
  waiting(waiting: boolean): void;
  /** The store refused a write of the run: another run took the task over. */
  superseded(): void;
}

/** One run's input rounds. */
export class InputRounds {
  readonly #host: InputRoundsHost;
  /** Input keys this run has used, so repeated names get fresh keys (the same on a re-run). */
  readonly #usedKeys = new Set<string>();
  /** Waiting `requireInput` calls, by key. */
  readonly #waiting = new Map<string, (response: InputResponse) => void>();
  /** Answers known so far, by key, including those given to earlier runs of the task. */
  #answers: Readonly<Record<string, InputResponse>>;
  /** The latest record's received-but-not-taken answers. */
  #pendingResponses: Readonly<Record<string, InputResponse>> = {};
  /** `requireInput` calls waiting on stored questions. */
  #parkedCalls = 0;

  constructor(task: TaskRecord, host: InputRoundsHost) {
    this.#host = host;
    this.#answers = task.inputAnswers;
  }

  /** A newer record of the task: hands its new answers to the calls waiting for them. */
  update(task: TaskRecord): void {
    this.#answers = task.inputAnswers;
    this.#pendingResponses = task.inputResponses;
    this.#deliverAnswers();
  }

  #deliverAnswers(): void {
    let delivered = false;
    for (const [key, deliver] of [...this.#waiting]) {
      const answer = this.#answers[key];
      if (answer !== undefined) {
        this.#waiting.delete(key);
        deliver(answer);
        delivered = true;
      }
    }
    // The answers are kept in `inputAnswers`; the received-but-not-taken list is drained
    // so it says what it means (nothing is waiting to be picked up).
    if (delivered && Object.keys(this.#pendingResponses).length > 0) {
      this.#host.writer.takeInputResponses().catch(() => {});
    }
  }

  /** `ctx.requireInput`: asks what is not answered yet, and waits for every answer. */
  async require(
    requests: Readonly<Record<string, InputRequest>>,
    statusMessage?: string | null,
  ): Promise<Record<string, InputResponse>> {
    const host = this.#host;
    const signal = host.signal;
    signal.throwIfAborted();
    const keyOf = new Map<string, string>();
    const missing: Record<string, InputRequest> = {};
    for (const name of Object.keys(requests)) {
      let key = name;
      for (let n = 2; this.#usedKeys.has(key); n++) key = `${name}-${n}`;
      this.#usedKeys.add(key);
      keyOf.set(name, key);
      // Answered before (by an earlier run of the task): not asked again.
      if (this.#answers[key] === undefined) missing[key] = requests[name] as InputRequest;
    }
    const answers = new Map<string, InputResponse>();
    const all = new Promise<void>((resolve, reject) => {
      const onAbort = () => {
        for (const key of keyOf.values()) this.#waiting.delete(key);
        reject(signal.reason);
      };
      signal.addEventListener("abort", onAbort, { once: true });
      for (const key of keyOf.values()) {
        this.#waiting.set(key, (response) => {
          answers.set(key, response);
          if (answers.size === keyOf.size) {
            signal.removeEventListener("abort", onAbort);
            resolve();
          }
        });
      }
    });
    // A rejection before anyone awaits `all` must not surface as unhandled.
    all.catch(() => {});
    if (Object.keys(missing).length > 0) {
      try {
        const task = await host.keepTrying(() => host.writer.requireInput(missing, statusMessage));
        this.#answers = task.inputAnswers;
        host.asked(Object.keys(missing), task.status);
      } catch (error) {
        for (const key of keyOf.values()) this.#waiting.delete(key);
        if (isTaskError(error, "lease_lost")) host.superseded();
        throw error;
      }
    }
    this.#deliverAnswers();
    const parked = Object.keys(missing).length > 0;
    if (parked && this.#parkedCalls++ === 0) host.waiting(true);
    try {
      await all;
    } finally {
      if (parked && --this.#parkedCalls === 0) host.waiting(false);
    }
    host.answered([...keyOf.values()]);
    const out: Record<string, InputResponse> = {};
    for (const [name, key] of keyOf) out[name] = answers.get(key) as InputResponse;
    return out;
  }
}
