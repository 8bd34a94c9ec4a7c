import type { Row } from "./executor.js";
import { createBatchJson } from "./plans/create.js";
import type { Plans } from "./plans/index.js";
import type { StatementRunner } from "./statement-runner.js";
import { storeWriteOptions, WriteBatcher } from "./write-batcher.js";

/** One create waiting for its batch. */
export interface CreateEntry {
  /** The row as `create` reads it (see `newTaskJson`). */
  readonly json: string;
  readonly taskId: string;
}

/**
 * Creates of the same moment, sent as one `create` statement per batch (group commit, see
 * `write-batcher.ts`); creates that may claim under an owner limit are grouped the same way,
 * each batch one statement after the claim lock (see `plans/locked.ts`).
 */
export class CreateBatcher {
  readonly #runner: StatementRunner;
  readonly #plans: Plans;
  readonly #now: () => number | null;
  readonly #batcher: WriteBatcher<CreateEntry, Row | undefined>;
  readonly #lockedBatcher: WriteBatcher<CreateEntry, Row | undefined>;

  constructor(runner: StatementRunner, plans: Plans, now: () => number | null, timeoutMs: number) {
    this.#runner = runner;
    this.#plans = plans;
    this.#now = now;
    const options = storeWriteOptions("a create", timeoutMs);
    this.#batcher = new WriteBatcher((batch) => this.#send(batch, false), options);
    this.#lockedBatcher = new WriteBatcher((batch) => this.#send(batch, true), options);
  }

  /** Queues `entry` for the next batch; resolves with its row, if it inserted one. */
  submit(entry: CreateEntry): Promise<Row | undefined> {
    return this.#batcher.submit(entry);
  }

  /**
   * Queues `entry` for the next batch sent after the claim lock: serialised with every claim
   * and every other such batch on any node (each row counts the owner's rows before it).
   */
  locked(entry: CreateEntry): Promise<Row | undefined> {
    return this.#lockedBatcher.submit(entry);
  }

  /**
   * Sends a batch (`locked`: after the claim lock); rows in batch order, `undefined` for a
   * create that inserted nothing. A second create of an id already in the batch is not sent:
   * it inserts nothing, and the store finds out why afterwards.
   */
  async #send(batch: readonly CreateEntry[], locked: boolean): Promise<(Row | undefined)[]> {
    const seen = new Set<string>();
    const tasks = createBatchJson(
      batch.map((c) => {
        if (seen.has(c.taskId)) return null;
        seen.add(c.taskId);
        return c.json;
      }),
    );
    const operation = batch.length === 1 ? "create" : `create (${batch.length} tasks)`;
    const statement = this.#plans.create({ now: this.#now(), tasks });
    const rows = locked
      ? await this.#runner.locked(operation, statement)
      : await this.#runner.run(operation, statement);
    const byPosition: (Row | undefined)[] = new Array(batch.length).fill(undefined);
    for (const row of rows) byPosition[Number(row.i)] = row;
    return byPosition;
  }
}
