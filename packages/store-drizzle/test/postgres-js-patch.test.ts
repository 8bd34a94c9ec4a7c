import { connect, createServer, type Server, type Socket } from "node:net";
import postgres, { type Sql } from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DATABASE_URL } from "./helpers.js";

/**
 * The workspace's patch of postgres.js 3.4.9 (`patches/postgres@3.4.9.patch`), pinned: a
 * statement handed to a connection whose socket has just been reset must fail at once, and
 * the connection must come back for the next one.
 *
 * Unpatched, the statement's write waits for the next turn, the socket's `close` comes
 * first and cancels it without forgetting it, and every later connect of that connection
 * sends its startup message behind the stale bytes never (they are flushed only once
 * 1 KiB piles up): each attempt waits for `connect_timeout`, so a node kept failing for
 * 30 s after a PostgreSQL restart. And the statement itself stayed pending, to be settled
 * by the next connection's startup with no rows, as if it had run.
 */
const target = new URL(DATABASE_URL);

/** A TCP relay to the real PostgreSQL whose connections the test can reset. */
class ResettingRelay {
  readonly #clients = new Set<Socket>();
  #server: Server | null = null;
  port = 0;

  async start(): Promise<void> {
    this.#server = createServer((client) => {
      this.#clients.add(client);
      const upstream = connect(Number(target.port || 5432), target.hostname);
      client.on("error", () => upstream.destroy());
      upstream.on("error", () => client.destroy());
      client.pipe(upstream).pipe(client);
      client.on("close", () => {
        this.#clients.delete(client);
        upstream.destroy();
      });
    });
    const server = this.#server;
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    this.port = (server.address() as { port: number }).port;
  }

  /** Resets every relayed connection (the driver's sockets read ECONNRESET). */
  resetAll(): void {
    for (const client of this.#clients) client.resetAndDestroy();
  }

  async stop(): Promise<void> {
    for (const client of this.#clients) client.destroy();
    const server = this.#server;
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

const PENDING = Symbol("pending");
const within = <T>(promise: Promise<T>, ms: number) =>
  Promise.race([promise, new Promise<typeof PENDING>((r) => setTimeout(() => r(PENDING), ms))]);

describe("postgres.js, as patched in this workspace", () => {
  const relay = new ResettingRelay();
  let sql: Sql;

  beforeAll(async () => {
    await relay.start();
    const url = new URL(DATABASE_URL);
    url.hostname = "127.0.0.1";
    url.port = String(relay.port);
    // One connection, so the statement after the reset reuses the one that was reset.
    sql = postgres(url.toString(), {
      max: 1,
      connect_timeout: 2,
      fetch_types: false,
      onnotice: () => {},
    });
  });

  afterAll(async () => {
    await sql?.end({ timeout: 1 });
    await relay.stop();
  });

  it("fails a statement sent as its connection is reset, and reconnects for the next", async () => {
    expect(await sql`select 1 as x`).toEqual([{ x: 1 }]);
    const sentAsReset = new Promise<string>((resolve) => {
      setTimeout(() => {
        relay.resetAll();
        // Block until the reset has reached the driver's socket, so that the loop reads it
        // (and closes the socket) before the write below leaves.
        const until = Date.now() + 50;
        while (Date.now() < until) {}
        // Sent from the check phase: its write waits for the next turn; the close comes first.
        setImmediate(() => {
          sql`select 2 as x`.then(
            (rows) => resolve(`resolved with ${JSON.stringify(rows)}`),
            (error: { code?: string }) => resolve(`rejected: ${error.code}`),
          );
        });
      }, 10);
    });
    expect(await within(sentAsReset, 1_000)).toBe("rejected: CONNECTION_CLOSED");
    // Unpatched: CONNECT_TIMEOUT after connect_timeout, on every attempt for a while.
    const next = await within(
      sql`select 3 as x`.then(
        (rows) => rows,
        (error: { code?: string }) => `rejected: ${error.code}`,
      ),
      1_500,
    );
    expect(next).toEqual([{ x: 3 }]);
  });
});
