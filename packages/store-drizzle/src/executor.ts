import type { PGlite } from "@electric-sql/pglite";
import type { Sql } from "postgres";
import { preparedQuery } from "./pglite-statements.js";
import type { Reachability } from "./reachability.js";

/** A row as the drivers return it: column name → parsed value. */
export type Row = Record<string, unknown>;

/** Runs one parameterised statement; the only thing the store's hot path needs. */
export type Query = (text: string, params: readonly unknown[]) => Promise<Row[]>;

/**
 * The few things the store needs from a driver, so that one store class and one set of
 * statements serve postgres.js, node-postgres and PGlite. Statements are sent as prepared
 * statements where the driver supports it (postgres.js and node-postgres cache them per
 * connection).
 */
export interface Executor {
  readonly kind: "postgres" | "node-postgres" | "pglite";
  readonly query: Query;
  /**
   * Runs SQL that is not one of the store's statements (`store.query`, for tests and
   * benchmarks) and keeps nothing of it: no prepared statement, no settings.
   */
  readonly adhoc: Query;
  /**
   * Runs statements without parameters (`;`-separated) in one round trip, as one implicit
   * transaction (all or nothing; each statement sees what the ones before it committed to
   * wait for), and resolves with every statement's rows, in order.
   */
  readonly script: (text: string) => Promise<Row[][]>;
  /** Runs `fn` in one transaction; statements without parameters may hold several commands. */
  transaction<T>(
    fn: (exec: (text: string) => Promise<void>, query: Query) => Promise<T>,
  ): Promise<T>;
}

/**
 * An executor over a postgres.js client (a pool). Statements go through `reachability`, so
 * they fail fast rather than queue for a connection while the server refuses connections.
 */
export function postgresExecutor(sql: Sql, reachability: Reachability): Executor {
  return {
    kind: "postgres",
    script: (text) =>
      reachability.run(async () =>
        eachResult((await sql.unsafe(text)) as unknown as Row[] | Row[][]),
      ),
    query: (text, params) =>
      reachability.run(() => sql.unsafe(text, params as never[], { prepare: true })) as Promise<
        Row[]
      >,
    adhoc: (text, params) =>
      reachability.run(() => sql.unsafe(text, params as never[])) as Promise<Row[]>,
    transaction: (fn) =>
      reachability.run(() =>
        sql.begin((tx) =>
          fn(
            async (text) => {
              await tx.unsafe(text);
            },
            (text, params) =>
              tx.unsafe(text, params as never[], { prepare: true }) as unknown as Promise<Row[]>,
          ),
        ),
      ) as never,
  };
}

/**
 * An executor over a PGlite instance (one in-process connection, so calls queue). Its
 * statements are prepared once per instance (`pglite-statements.ts`), as the other drivers
 * prepare them per connection.
 */
export function pgliteExecutor(db: PGlite): Executor {
  return {
    kind: "pglite",
    script: async (text) => (await db.exec(text)).map((result) => result.rows as Row[]),
    query: preparedQuery(db),
    adhoc: async (text, params) => (await db.query<Row>(text, params as unknown[])).rows,
    transaction: (fn) =>
      db.transaction((tx) =>
        fn(
          async (text) => {
            await tx.exec(text);
          },
          async (text, params) => (await tx.query<Row>(text, params as unknown[])).rows,
        ),
      ),
  };
}

/** Each statement's rows of a script's result (postgres.js nests them; one alone is not). */
function eachResult(results: Row[] | Row[][]): Row[][] {
  return Array.isArray(results.at(-1)) ? (results as Row[][]) : [results as Row[]];
}
