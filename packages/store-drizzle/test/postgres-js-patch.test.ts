import postgres, { type Sql } from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectionsNamed, DATABASE_URL } from "./helpers.js";
import { Relay } from "./relay.js";

/**
 * The workspace's patch of postgres.js 3.4.9 (`patches/postgres@3.4.9.patch`), pinned: a
 * statement handed to a connection whose socket has just been reset must fail at once, and
 * the connection must come back for the next one.
 *
 * Unpatched, the statement's write waits for the next turn, the socket's `close` comes
 * first and cancels it without forgetting it, and no later connect of that connection sends
 * its startup message (it waits behind the stale bytes, flushed only once 1 KiB piles up):
 * each attempt waits for `connect_timeout`, so a node kept failing for 30 s after a
 * PostgreSQL restart. And the statement itself stayed pending, to be settled
 * by the next connection's startup with no rows, as if it had run.
 *
 * And `end()` must leave no connection open: unpatched, statements still waiting for a
 * connection when it was called stayed queued, the connection it closed reconnected to run
 * them, and that connection stayed open after `end()` had resolved, so the process never
 * exited (a store closed while its polls waited for the read pool's one connection).
 */
const PENDING = Symbol("pending");
const within = <T>(promise: Promise<T>, ms: number) =>
  Promise.race([promise, new Promise<typeof PENDING>((r) => setTimeout(() => r(PENDING), ms))]);

describe("postgres.js, as patched in this workspace", () => {
  const relay = new Relay();
  let sql: Sql;

  beforeAll(async () => {
    await relay.start();
    // One connection, so the statement after the reset reuses the one that was reset.
    sql = postgres(relay.url(), {
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

  it("end() fails the statements still waiting for a connection and leaves none open", async () => {
    const applicationName = `patch-end-${process.pid}`;
    const ending = postgres(DATABASE_URL, {
      max: 1,
      fetch_types: false,
      onnotice: () => {},
      connection: { application_name: applicationName },
    });
    // The first goes to the connection being opened; the others wait for it.
    const outcomes = Array.from({ length: 5 }, (_, i) =>
      ending`select ${i}::int as i`.then(
        (rows) => `resolved with ${JSON.stringify(rows)}`,
        (error: { code?: string }) => `rejected: ${error.code}`,
      ),
    );
    await ending.end({ timeout: 5 });
    expect(await Promise.all(outcomes)).toEqual([
      'resolved with [{"i":0}]',
      ...Array.from({ length: 4 }, () => "rejected: CONNECTION_ENDED"),
    ]);
    // Unpatched: one connection of that name, idle, for good.
    expect(await connectionsNamed(applicationName)).toBe(0);
  });
});
