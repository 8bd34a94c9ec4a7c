import type { Query, Row } from "./executor.js";
import type { ById } from "./plans/fragments.js";
import type { Plans } from "./plans/index.js";
import { getBatchJson } from "./plans/reads.js";
import type { StatementRunner } from "./statement-runner.js";
import { storeWriteOptions, WriteBatcher } from "./write-batcher.js";

/**
 * Gets of the same moment, sent as one `getMany` statement per batch (see `write-batcher.ts`):
 * clients polling their tasks are most of a task server's statements (four to six gets per
 * task in the queue benchmark, against one create, one claim and one ending), and each
 * statement costs the database a parse, a plan and a wake-up, and this process a socket
 * write. A lone get is sent as `get`, as before. A get is sent only after it was asked
 * for, so it sees every write that returned before.
 */
export class GetBatcher {
  readonly #batcher: WriteBatcher<ById, Row | undefined>;

  /** `reads`: where the gets run (the read pool, or the executor). */
  constructor(runner: StatementRunner, plans: Plans, reads: Query, timeoutMs: number) {
    this.#batcher = new WriteBatcher(send, storeWriteOptions("a read", timeoutMs));

    /** Sends a batch; rows in batch order, `undefined` where nothing was found. */
    async function send(batch: readonly ById[]): Promise<(Row | undefined)[]> {
      if (batch.length === 1) {
        const rows = await runner.run("get", plans.get(batch[0] as ById), reads);
        return [rows[0]];
      }
      const rows = await runner.run(
        `get (${batch.length} tasks)`,
        plans.getMany({ gets: getBatchJson(batch) }),
        reads,
      );
      const byPosition: (Row | undefined)[] = new Array(batch.length).fill(undefined);
      // The row keeps its `i` (records are read by column name): copying a row without it
      // (`{ i, ...rest }`) was a twentieth of this process's time in the queue benchmark.
      for (const row of rows) byPosition[row.i as number] = row;
      return byPosition;
    }
  }

  /** Queues a get for the next batch; resolves with its row, or `undefined` if none. */
  submit(get: ById): Promise<Row | undefined> {
    return this.#batcher.submit(get);
  }
}
