import { plan } from "./plan.js";

/** The input of {@link notifyBatch}. */
export interface NotifyBatchInput {
  readonly channel: string;
  /** The payloads, a JSON array of strings: one NOTIFY each. */
  readonly payloads: string;
}

/**
 * One after-commit batch of notifications (see `feed.ts`). Notifications carry nothing
 * durable, so their commit need not wait for the disk: the transaction-local set_config
 * makes this one statement's commit asynchronous. The same for every store.
 */
export const notifyBatch = plan<NotifyBatchInput>(
  ["channel", "payloads"],
  (p) => `SELECT pg_notify(${p.channel}::text, p)
  FROM (SELECT set_config('synchronous_commit', 'off', true)) AS async_commit,
    jsonb_array_elements_text(${p.payloads}::text::jsonb) AS p`,
);
