import { connect, createServer, type Server, type Socket } from "node:net";
import { DATABASE_URL } from "./helpers.js";

const target = new URL(DATABASE_URL);

/**
 * A TCP relay between the store (or a driver) and the real PostgreSQL on 127.0.0.1, which a
 * test can cut (every connection closed, the port closed), black-hole (accepts, never
 * answers), restore on the same port, or whose connections it can reset: the database "goes
 * away" without stopping the shared server.
 */
export class Relay {
  #server: Server | null = null;
  readonly #sockets = new Set<Socket>();
  /** The relayed connections' sides that face the store. */
  readonly #clients = new Set<Socket>();
  blackHole = false;
  port = 0;

  async start(): Promise<void> {
    const server = createServer((client) => {
      this.#sockets.add(client);
      this.#clients.add(client);
      client.on("close", () => {
        this.#sockets.delete(client);
        this.#clients.delete(client);
      });
      client.on("error", () => {});
      if (this.blackHole) return;
      const upstream = connect(Number(target.port || 5432), target.hostname);
      this.#sockets.add(upstream);
      upstream.on("close", () => this.#sockets.delete(upstream));
      upstream.on("error", () => client.destroy());
      client.on("error", () => upstream.destroy());
      client.pipe(upstream).pipe(client);
      client.on("close", () => upstream.destroy());
      upstream.on("close", () => client.destroy());
    });
    await new Promise<void>((resolve) => server.listen(this.port, "127.0.0.1", resolve));
    this.port = (server.address() as { port: number }).port;
    this.#server = server;
  }

  /** Resets every relayed connection: the store's sockets read ECONNRESET. */
  resetAll(): void {
    for (const client of this.#clients) client.resetAndDestroy();
  }

  async stop(): Promise<void> {
    for (const s of this.#sockets) s.destroy();
    this.#sockets.clear();
    this.#clients.clear();
    const server = this.#server;
    this.#server = null;
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  url(): string {
    const u = new URL(DATABASE_URL);
    u.hostname = "127.0.0.1";
    u.port = String(this.port);
    return u.toString();
  }
}
