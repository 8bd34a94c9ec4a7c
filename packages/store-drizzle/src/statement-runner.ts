import { taskErrors } from "@mcp-tasks/core/store";
import { isNotPrepared, mapDriverError } from "./errors.js";
import type { Executor, Query, Row } from "./executor.js";
import { type LockedScript, LockedScripts } from "./plans/locked.js";
import type { Statement } from "./plans/plan.js";

/**
 * After a locked statement was found missing on a connection, its next runs prepare it
 * first (where it is not prepared yet), this many of them: the retry itself goes to whichever
 * connection the pool lends, and postgres.js lends its idle connections in turn, so under
 * load it went to another one, and the connection that lacked the statement kept lacking it
 * (8 % of claims paid the retry, for good). Twice the default pool size; a connection still
 * missed starts another sweep. (Lending the same connection for the retry would need
 * postgres.js's `reserve()`, which never resolves when it must open a connection with
 * `fetch_types: false`, as the store's pools are.)
 */
const PREPARING_SWEEP = 32;

/**
 * Sends a store's statements: each waits for PostgreSQL at most the operation timeout, fails
 * with the store's error vocabulary (see `errors.ts`), and none leaves once the store closed.
 */
export class StatementRunner {
  readonly #exec: Executor;
  readonly #timeoutMs: number;
  readonly #locked: LockedScripts;
  /**
   * Locked statements found missing on a connection lately, and how many of their next runs
   * still prepare them first wherever they run (see {@link PREPARING_SWEEP}).
   */
  readonly #preparingSweeps = new Map<string, number>();
  #closed = false;

  constructor(exec: Executor, timeoutMs: number, table: string) {
    this.#exec = exec;
    this.#timeoutMs = timeoutMs;
    this.#locked = new LockedScripts(table);
  }

  /** From now on every statement fails with `store_unavailable`. */
  close(): void {
    this.#closed = true;
  }

  /** Runs `statement` (on `query`, by default the executor's) and resolves with its rows. */
  run(operation: string, statement: Statement, query: Query = this.#exec.query): Promise<Row[]> {
    return this.#send(operation, () => query(statement.text, statement.values));
  }

  /**
   * Runs `statement` after the claim lock, in one round trip (see `plans/locked.ts`): it
   * runs one at a time with every other such statement on any node.
   */
  async locked(operation: string, statement: Statement): Promise<Row[]> {
    // Built first: a value no literal can carry is refused as it is, not as a driver error.
    const script = this.#locked.script(statement);
    const results = await this.#sendLocked(operation, statement.text, script);
    return results.at(-1) ?? [];
  }

  /**
   * Runs `before`, then `statement`, after the claim lock, in one transaction sent in one
   * round trip (see `LockedScripts.scriptAfter`); resolves with the rows of each. Nothing
   * of either is written when one fails.
   */
  async lockedAfter(
    operation: string,
    before: Statement,
    statement: Statement,
  ): Promise<[before: Row[], rows: Row[]]> {
    const script = this.#locked.scriptAfter(before, statement);
    const key = `${before.text}\u0000${statement.text}`;
    const results = await this.#sendLocked(operation, key, script);
    return [results.at(-2) ?? [], results.at(-1) ?? []];
  }

  /**
   * Sends a locked script, assuming its statements are prepared on the connection, and
   * preparing them when they are not (see {@link PREPARING_SWEEP}); `key` names the script.
   * Resolves with every statement's rows.
   */
  #sendLocked(operation: string, key: string, script: LockedScript): Promise<Row[][]> {
    const run = this.#exec.script;
    const sweep = this.#preparingSweeps.get(key);
    if (sweep !== undefined) {
      if (sweep > 1) this.#preparingSweeps.set(key, sweep - 1);
      else this.#preparingSweeps.delete(key);
      return this.#send(operation, () => run(script.preparing()));
    }
    return this.#send(operation, async () => {
      try {
        return await run(script.prepared);
      } catch (error) {
        // Not prepared on this connection yet (nothing ran: the script stopped there).
        if (!isNotPrepared(error)) throw error;
        this.#preparingSweeps.set(key, PREPARING_SWEEP);
        return run(script.preparing());
      }
    });
  }

  async #send<T>(operation: string, send: () => Promise<T>): Promise<T> {
    if (this.#closed) throw taskErrors.storeUnavailable(`${operation}: the store was closed`);
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () =>
          reject(
            taskErrors.storeUnavailable(
              `${operation} got no answer from PostgreSQL within ${this.#timeoutMs} ms`,
            ),
          ),
        this.#timeoutMs,
      );
    });
    try {
      return await Promise.race([send(), timeout]);
    } catch (error) {
      throw mapDriverError(error, operation);
    } finally {
      clearTimeout(timer);
    }
  }
}
