import { isTaskError } from "@mcp-tasks/core";
import type { Intent } from "@mcp-tasks/core/store";
import type { Row } from "./executor.js";
import type { Plans } from "./plans/index.js";
import type { Statement } from "./plans/plan.js";
import { type SettleRow, settleBatchJson, terminalKnown } from "./plans/settle.js";
import type { StatementRunner } from "./statement-runner.js";
import { storeWriteOptions, WriteBatcher } from "./write-batcher.js";

/** One terminal transition waiting for its batch. */
export interface SettleEntry {
  readonly intent: Intent;
  readonly row: SettleRow;
}

/** A claim riding with the next batch of endings (see {@link SettleBatcher.claimAfterEndings}). */
interface Rider {
  readonly claim: Statement;
  readonly resolve: (rows: Row[]) => void;
  readonly reject: (error: unknown) => void;
}

/**
 * Terminal transitions (complete, fail, cancel) of the same moment, sent as one `settle`
 * statement per batch (group commit, see `write-batcher.ts`): a claimed batch of tasks
 * finishing at once costs one statement, one commit and one round trip. A claim under an
 * owner limit may ride with a batch, after it, in the same round trip and transaction.
 */
export class SettleBatcher {
  readonly #batcher: WriteBatcher<SettleEntry, Row | undefined>;
  readonly #runner: StatementRunner;
  /** The claim that rides with the next batch, if any. */
  #rider: Rider | null = null;

  constructor(runner: StatementRunner, plans: Plans, now: () => number | null, timeoutMs: number) {
    this.#runner = runner;
    this.#batcher = new WriteBatcher(
      (batch) => send(batch, this.#takeRider()),
      storeWriteOptions("an outcome", timeoutMs),
    );

    /**
     * Sends a batch, and `rider`'s claim after it when there is one; rows in batch order,
     * `undefined` where the write did not apply.
     */
    async function send(
      batch: readonly SettleEntry[],
      rider: Rider | null,
    ): Promise<(Row | undefined)[]> {
      const operation =
        batch.length === 1 ? (batch[0] as SettleEntry).intent : `settle (${batch.length} tasks)`;
      const statement = plans.settle({
        now: now(),
        outcomes: settleBatchJson(batch.map((e) => e.row)),
      });
      let rows: Row[];
      if (rider === null) rows = await runner.run(operation, statement);
      else {
        try {
          let claimed: Row[];
          [rows, claimed] = await runner.lockedAfter(
            `${operation} and a claim`,
            statement,
            rider.claim,
          );
          rider.resolve(claimed);
        } catch (error) {
          // Refused by the database, neither was written: the claim goes alone, the batch as
          // a failed batch does. Unreachable (or no answer in time), the claim fails too: it
          // may have been written, and sent again it would take more tasks.
          if (isTaskError(error, "store_unavailable")) rider.reject(error);
          else runner.locked("claim", rider.claim).then(rider.resolve, rider.reject);
          throw error;
        }
      }
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

  /**
   * Runs `claim` (a claim under an owner limit, see `plans/queue.ts`) in the round trip of
   * the batch of endings that leaves at the end of this turn, after them and after the
   * claim lock, in their transaction: it takes the places they free under the owners'
   * limits. A claim sent beside them instead counts those runs as still running, and under
   * a backlog at the limits came back empty (half the claims of the queue benchmark's
   * worker nodes). Undefined when no batch leaves this turn, or a claim already rides with
   * it: the caller sends the claim alone.
   */
  claimAfterEndings(claim: Statement): Promise<Row[]> | undefined {
    if (this.#rider !== null || !this.#batcher.sendsSoon()) return undefined;
    return new Promise<Row[]>((resolve, reject) => {
      const rider: Rider = { claim, resolve, reject };
      this.#rider = rider;
      // Scheduled after the batch's own turn end (a write queued it first): a batch that did
      // not leave after all (its writes waited too long) takes no claim, which goes alone.
      setImmediate(() => {
        if (this.#rider !== rider) return;
        this.#rider = null;
        this.#runner.locked("claim", claim).then(resolve, reject);
      });
    });
  }

  #takeRider(): Rider | null {
    const rider = this.#rider;
    this.#rider = null;
    return rider;
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
