import type { Executor, Query, Row } from "./executor.js";
import { statementName } from "./names.js";

/*
 * node-postgres (`pg`) without depending on it: the store only calls the few methods typed
 * below, on the Pool or Client the application made (pg stays an optional peer dependency,
 * and these types keep `@types/pg` out of the declarations).
 *
 * The record mapping is the same as with postgres.js because the statements never hand a
 * driver a type it would parse its own way: timestamps come back as float8 milliseconds,
 * counters as int4 or float8 (pg returns int8 as a string; none is selected raw), jsonb as
 * parsed JSON. And the store's queries bring their own type parsers (node-postgres's
 * per-query `types`), so parsers the application set globally or on its pool (int8 as
 * BigInt, timestamps or JSON left as strings, …) change nothing for the store.
 */

/** Type parsers as node-postgres asks them (by type oid, text format). */
export interface NodePostgresTypes {
  getTypeParser(oid: number, format?: string): (value: string) => unknown;
}

/** A query as node-postgres takes it: `$1`… parameters, a name to prepare it under, parsers. */
export interface NodePostgresQuery {
  readonly text: string;
  readonly values?: unknown[];
  readonly name?: string;
  readonly types?: NodePostgresTypes;
}

const asText = (value: string) => value;
/** The parsers of the types the statements return: bool, int2/int4, float4/float8, json/jsonb. */
const PARSERS = new Map<number, (value: string) => unknown>([
  [16, (value) => value === "t"],
  [21, Number],
  [23, Number],
  [700, Number],
  [701, Number],
  [114, (value) => JSON.parse(value)],
  [3802, (value) => JSON.parse(value)],
]);
/** Everything else (text, and int8 or timestamps should a raw query select them) as text. */
const STORE_TYPES: NodePostgresTypes = {
  getTypeParser: (oid) => PARSERS.get(oid) ?? asText,
};

/** A LISTEN notification as node-postgres emits it. */
export interface NodePostgresNotification {
  readonly channel: string;
  readonly payload?: string | undefined;
}

/** The part of a node-postgres `Client` (or a client checked out of a `Pool`) the store uses. */
export interface NodePostgresClient {
  query(query: NodePostgresQuery): Promise<{ rows: unknown[] }>;
  query(text: string): Promise<unknown>;
  on(event: "notification", listener: (message: NodePostgresNotification) => void): unknown;
  on(event: "error", listener: (error: Error) => void): unknown;
  removeListener(
    event: "notification",
    listener: (message: NodePostgresNotification) => void,
  ): unknown;
  removeListener(event: "error", listener: (error: Error) => void): unknown;
}

/** A client checked out of a node-postgres `Pool`. */
export interface NodePostgresPoolClient extends NodePostgresClient {
  release(error?: Error | boolean): void;
}

/** The part of a node-postgres `Pool` the store uses. */
export interface NodePostgresPool {
  query(query: NodePostgresQuery): Promise<{ rows: unknown[] }>;
  connect(): Promise<NodePostgresPoolClient>;
  readonly totalCount: number;
  readonly idleCount: number;
}

/** True for a node-postgres `Pool` (it counts its clients). */
export function isNodePostgresPool(value: unknown): value is NodePostgresPool {
  return (
    isQueryable(value) &&
    typeof (value as { connect?: unknown }).connect === "function" &&
    typeof (value as { totalCount?: unknown }).totalCount === "number" &&
    typeof (value as { idleCount?: unknown }).idleCount === "number"
  );
}

/** True for a node-postgres `Client` or `PoolClient` (checked after {@link isNodePostgresPool}). */
export function isNodePostgresClient(value: unknown): value is NodePostgresClient {
  return (
    isQueryable(value) &&
    typeof (value as { connect?: unknown }).connect === "function" &&
    typeof (value as { on?: unknown }).on === "function" &&
    typeof (value as { removeListener?: unknown }).removeListener === "function"
  );
}

function isQueryable(value: unknown): boolean {
  return (
    typeof value === "object" &&
    value !== null &&
    typeof (value as { query?: unknown }).query === "function"
  );
}

/**
 * An executor over a node-postgres `Pool` or `Client`. Statements are prepared (named) on
 * each connection at first use, like postgres.js does, so the hot path sends no Parse.
 * Transactions take a client of their own from a Pool; on a single Client they run on it,
 * so that the statements other callers send meanwhile would join them (only `migrate` and
 * `dropTaskSchema` use one).
 */
export function nodePostgresExecutor(target: NodePostgresPool | NodePostgresClient): Executor {
  const names = new Map<string, string>();
  const nameOf = (text: string) => {
    let name = names.get(text);
    if (name === undefined) {
      name = statementName(text);
      names.set(text, name);
    }
    return name;
  };
  const run = async <T>(
    client: NodePostgresClient,
    fn: (exec: (text: string) => Promise<void>, query: Query) => Promise<T>,
  ): Promise<T> => {
    const exec = async (text: string) => {
      // Without values node-postgres uses the simple protocol: several commands are fine.
      await client.query(text);
    };
    const query: Query = async (text, params) =>
      (await client.query({ text, values: params as unknown[], types: STORE_TYPES })).rows as Row[];
    await client.query("BEGIN");
    try {
      const result = await fn(exec, query);
      await client.query("COMMIT");
      return result;
    } catch (error) {
      await client.query("ROLLBACK").catch(() => {});
      throw error;
    }
  };
  return {
    kind: "node-postgres",
    script: async (text) => {
      const results = (await target.query({ text, types: STORE_TYPES } as never)) as unknown as
        | { rows: Row[] }
        | { rows: Row[] }[];
      return Array.isArray(results) ? results.map((result) => result.rows) : [results.rows];
    },
    query: async (text, params) =>
      (
        await target.query({
          name: nameOf(text),
          text,
          values: params as unknown[],
          types: STORE_TYPES,
        })
      ).rows as Row[],
    adhoc: async (text, params) =>
      (await target.query({ text, values: params as unknown[], types: STORE_TYPES })).rows as Row[],
    transaction: async (fn) => {
      if (!isNodePostgresPool(target)) return run(target, fn);
      const client = await target.connect();
      let broken: Error | undefined;
      try {
        return await run(client, fn);
      } catch (error) {
        // A connection that failed mid-transaction is not given back to the pool.
        if (error instanceof Error && !("severity" in error)) broken = error;
        throw error;
      } finally {
        client.release(broken);
      }
    },
  };
}
