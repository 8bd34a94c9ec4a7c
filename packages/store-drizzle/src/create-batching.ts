import { isTaskError } from "@mcp-tasks/core";
import { taskErrors } from "@mcp-tasks/core/store";
import type { Row } from "./executor.js";
import { createBatchJson } from "./plans/create.js";
import type { Plans } from "./plans/index.js";
import type { StatementRunner } from "./statement-runner.js";
import { WriteBatcher } from "./write-batcher.js";

/** One create waiting for its batch. */
export interface CreateEntry {
  /** The row as `create` reads it (see `newTaskJson`). */
  readonly json: string;
  readonly taskId: string;
}

/**
 * Creates of the same moment, sent as one `create` statement per batch (group commit, see
 * `write-batcher.ts`); and creates that may claim under an owner limit, sent alone after the
 * claim lock (see `plans/locked.ts`).
 */
export class CreateBatcher {
  readonly #runner: StatementRunner;
  readonly #plans: Plans;
  readonly #now: () => number | null;
  readonly #batcher: WriteBatcher<CreateEntry, Row | undefined>;

  constructor(runner: StatementRunner, plans: Plans, now: () => number | null, timeoutMs: number) {
    this.#runner = runner;
    this.#plans = plans;
    this.#now = now;
    this.#batcher = new WriteBatcher((batch) => this.#send(batch), {
      // Sent again one by one only when the database answered (refused the batch).
      isolate: (error) => !isTaskError(error, "store_unavailable"),
      maxQueuedMs: timeoutMs,
      expired: () =>
        taskErrors.storeUnavailable(
          `a create waited more than ${timeoutMs} ms for PostgreSQL to take it`,
        ),
    });
  }

  /** Queues `entry` for the next batch; resolves with its row, if it inserted one. */
  submit(entry: CreateEntry): Promise<Row | undefined> {
    return this.#batcher.submit(entry);
  }

  /**
   * Sends `entry` alone after the claim lock: serialised with every claim and every other
   * such create on any node.
   */
  async locked(entry: CreateEntry): Promise<Row | undefined> {
    const tasks = createBatchJson([entry.json]);
    const rows = await this.#runner.locked(
      "create",
      this.#plans.create({ now: this.#now(), tasks }),
    );
    return rows.find((row) => Number(row.i) === 0);
  }

  /**
   * Sends a batch; rows in batch order, `undefined` for a create that inserted nothing. A
   * second create of an id already in the batch is not sent: it inserts nothing, and the
   * store finds out why afterwards.
   */
  async #send(batch: readonly CreateEntry[]): Promise<(Row | undefined)[]> {
    const seen = new Set<string>();
    const tasks = createBatchJson(
      batch.map((c) => {
        if (seen.has(c.taskId)) return null;
        seen.add(c.taskId);
        return c.json;
      }),
    );
    const operation = batch.length === 1 ? "create" : `create (${batch.length} tasks)`;
    const rows = await this.#runner.run(operation, this.#plans.create({ now: this.#now(), tasks }));
    const byPosition: (Row | undefined)[] = new Array(batch.length).fill(undefined);
    for (const row of rows) byPosition[Number(row.i)] = row;
    return byPosition;
  }
}
