import type { Subscribe } from "./feed.js";
import type {
  NodePostgresClient,
  NodePostgresNotification,
  NodePostgresPool,
} from "./node-postgres.js";

/*
 * LISTEN through node-postgres, for the store's change relay (see `change-relay.ts`): on a
 * single Client, or on a client checked out of a Pool and listened again after a loss.
 */

/** Quotes a channel name for LISTEN (the names are checked identifiers; see `channelName`). */
const quoted = (channel: string) => `"${channel.replaceAll('"', '""')}"`;

/**
 * LISTEN on a single node-postgres `Client`: notifications arrive on the connection the
 * store also queries through. A Client cannot reconnect: when its connection is lost the
 * store's calls fail with `store_unavailable` and no more notifications arrive.
 */
export function nodePostgresClientSubscribe(client: NodePostgresClient): Subscribe {
  return async (channel, onPayload) => {
    const listener = (message: NodePostgresNotification) => {
      if (message.channel === channel && typeof message.payload === "string") {
        onPayload(message.payload);
      }
    };
    client.on("notification", listener);
    try {
      await client.query(`LISTEN ${quoted(channel)}`);
    } catch (error) {
      client.removeListener("notification", listener);
      throw error;
    }
    return async () => {
      client.removeListener("notification", listener);
      await client.query(`UNLISTEN ${quoted(channel)}`);
    };
  };
}

/** How long to wait before listening again after the connection was lost: 0.1 s … 5 s. */
const RECONNECT_MIN_MS = 100;
const RECONNECT_MAX_MS = 5_000;

/**
 * LISTEN through a node-postgres `Pool`: one client checked out of the pool for as long as
 * the store is open (so the pool has one connection fewer for queries). When that
 * connection is lost it is dropped from the pool and the store listens again on a new one,
 * retrying with backoff; notifications sent in between are missed, as with postgres.js
 * (watchers re-check now and then).
 */
export function nodePostgresPoolSubscribe(pool: NodePostgresPool): Subscribe {
  return async (channel, onPayload) => {
    /** The client listening now, and how to hand it back (UNLISTEN, then release). */
    let current: { readonly giveBack: () => Promise<void> } | null = null;
    let stopped = false;
    let timer: NodeJS.Timeout | undefined;
    let delay = RECONNECT_MIN_MS;

    const onNotification = (message: NodePostgresNotification) => {
      if (message.channel === channel && typeof message.payload === "string") {
        onPayload(message.payload);
      }
    };

    const listen = async (): Promise<void> => {
      const client = await pool.connect();
      let released = false;
      /** Releases the client once: healthy back to the pool, or (with an error) destroyed. */
      const release = (error?: unknown) => {
        if (released) return;
        released = true;
        client.removeListener("notification", onNotification);
        client.release(error === undefined ? undefined : error instanceof Error ? error : true);
      };
      const listening = {
        giveBack: async () => {
          if (released) return;
          client.removeListener("notification", onNotification);
          try {
            await client.query(`UNLISTEN ${quoted(channel)}`);
          } catch (error) {
            release(error);
            return;
          }
          if (released) return;
          client.removeListener("error", onError);
          release();
        },
      };
      // Stays attached to a client released with an error (pg may report one loss twice:
      // the error, then the end), so that nothing it emits while being destroyed goes
      // unhandled; removed only when the client goes back to the pool healthy.
      const onError = (error: Error) => {
        const wasListening = current === listening && !released;
        release(error);
        if (wasListening) {
          current = null;
          retry();
        }
      };
      client.on("error", onError);
      client.on("notification", onNotification);
      try {
        await client.query(`LISTEN ${quoted(channel)}`);
      } catch (error) {
        release(error);
        throw error;
      }
      if (released) throw new Error("the LISTEN connection was lost");
      if (stopped) {
        // Unsubscribed while this one connected: hand the client back as it was.
        await listening.giveBack();
        return;
      }
      current = listening;
      delay = RECONNECT_MIN_MS;
    };

    const retry = () => {
      if (stopped || timer !== undefined) return;
      timer = setTimeout(() => {
        timer = undefined;
        if (stopped) return;
        listen().catch(() => {
          delay = Math.min(delay * 2, RECONNECT_MAX_MS);
          retry();
        });
      }, delay);
      timer.unref();
    };

    await listen();
    return async () => {
      stopped = true;
      clearTimeout(timer);
      timer = undefined;
      const listening = current;
      current = null;
      await listening?.giveBack();
    };
  };
}
