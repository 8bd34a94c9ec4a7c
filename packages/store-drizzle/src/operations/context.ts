import type { ChangeRelay } from "../change-relay.js";
import type { ClaimCursor } from "../claim-cursor.js";
import type { CreateBatcher } from "../create-batching.js";
import type { GetBatcher } from "../get-batching.js";
import type { StoreSettings } from "../options.js";
import type { Plans } from "../plans/index.js";
import type { SettleBatcher } from "../settle-batching.js";
import type { StatementRunner } from "../statement-runner.js";

/*
 * The operations (this folder) are the store's methods, one module per kind: each checks
 * its arguments (see `inputs.ts`), sends its plans' statements, and turns the rows into
 * records and announced changes. `DrizzleTaskStore` only delegates to them.
 */

/** What one store's operations work with. */
export interface StoreContext {
  readonly settings: StoreSettings;
  readonly plans: Plans;
  readonly runner: StatementRunner;
  /** `get`, batched, on the read pool (or the executor). */
  readonly gets: GetBatcher;
  readonly relay: ChangeRelay;
  readonly creates: CreateBatcher;
  readonly settles: SettleBatcher;
  /** Where the next claim starts looking for queued work. */
  readonly claimCursor: ClaimCursor;
  /** The injected clock's time, or null for the database clock. */
  readonly now: () => number | null;
}
