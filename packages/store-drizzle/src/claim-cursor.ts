import type { Row } from "./executor.js";
import { CLAIM_STOPPED_AT } from "./plans/queue.js";

/**
 * Where this store's next claim starts looking for queued work. A claim looks at a bounded
 * number of queues (an owner's queued tasks of one tool, see `MAX_CLAIM_QUEUES`); starting
 * each claim where the previous one stopped, round the end to the start, every queue is
 * looked at within one claim per 1,000 queues, however many there are. From the first queue
 * every time, the queues beyond the bound waited for good while those before it could not be
 * taken (their owners at their cap, or tools this node does not run).
 */
export class ClaimCursor {
  #ownerKey: string | null = null;
  #toolName: string | null = null;

  /** The queue the previous claim stopped at (null: none yet, start from the first). */
  get after(): { readonly afterOwnerKey: string | null; readonly afterToolName: string | null } {
    return { afterOwnerKey: this.#ownerKey, afterToolName: this.#toolName };
  }

  /**
   * Takes the queue a claim stopped at from its rows, and returns the claimed tasks' rows:
   * a claim that took nothing answers with one row that holds only where it stopped.
   */
  stoppedAt(rows: Row[]): Row[] {
    const first = rows[0];
    this.#ownerKey = (first?.[CLAIM_STOPPED_AT.ownerKey] as string | null | undefined) ?? null;
    this.#toolName = (first?.[CLAIM_STOPPED_AT.toolName] as string | null | undefined) ?? null;
    return rows.filter((row) => row.id !== null && row.id !== undefined);
  }
}
