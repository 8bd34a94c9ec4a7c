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
