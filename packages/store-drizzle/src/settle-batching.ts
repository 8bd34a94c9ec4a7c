import type { Intent } from "@mcp-tasks/core/store";
import type { Row } from "./executor.js";
import type { Plans } from "./plans/index.js";
import { type SettleRow, settleBatchJson, terminalKnown } from "./plans/settle.js";
import type { StatementRunner } from "./statement-runner.js";
import { storeWriteOptions, WriteBatcher } from "./write-batcher.js";

/** One terminal transition waiting for its batch. */
export interface SettleEntry {
  readonly intent: Intent;
  readonly row: SettleRow;
}

/**
 * Terminal transitions (complete, fail, cancel) of the same moment, sent as one `settle`
 * statement per batch (group commit, see `write-batcher.ts`): a claimed batch of tasks
 * finishing at once costs one statement, one commit and one round trip.
 */
export class SettleBatcher {
  readonly #batcher: WriteBatcher<SettleEntry, Row | undefined>;

  constructor(runner: StatementRunner, plans: Plans, now: () => number | null, timeoutMs: number) {
    this.#batcher = new WriteBatcher(
      (batch) => send(batch),
      storeWriteOptions("an outcome", timeoutMs),
    );

    /** Sends a batch; rows in batch order, `undefined` where the write did not apply. */
    async function send(batch: readonly SettleEntry[]): Promise<(Row | undefined)[]> {
      const operation =
        batch.length === 1 ? (batch[0] as SettleEntry).intent : `settle (${batch.length} tasks)`;
      const rows = await runner.run(
        operation,
        plans.settle({ now: now(), outcomes: settleBatchJson(batch.map((e) => e.row)) }),
      );
      const byPosition: (Row | undefined)[] = new Array(batch.length).fill(undefined);
      for (const row of rows) {
        const i = row.i as number;
        const { outcome } = (batch[i] as SettleEntry).row;
        // Columns the statement wrote from its parameters do not come back; fill them in. The
        // row keeps its `i`: copying it without (`{ i, ...rest }`) costs more than the rest.
        byPosition[i] = Object.assign(row, terminalKnown(outcome));
      }
      return byPosition;
    }
  }

  /** Queues `entry` for the next batch; resolves with its row, if the write applied. */
  submit(entry: SettleEntry): Promise<Row | undefined> {
    return this.#batcher.submit(entry);
  }

  /** Resolves once every batch sent so far has been answered. */
  idle(): Promise<void> {
    return this.#batcher.idle();
  }
}
