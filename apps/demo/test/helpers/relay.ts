import { connect, createServer, type Server, type Socket } from "node:net";
import { createPostgresTaskStore, type DrizzleTaskStore, migrate } from "@mcp-tasks/store-drizzle";

/**
 * A TCP relay in front of the real PostgreSQL on 127.0.0.1, which a test can cut (every
 * connection reset, the port closed) and restore on the same port: the database "goes
 * away" for a while without stopping the shared server.
 */
export class PostgresRelay {
  readonly #target: URL;
  readonly #sockets = new Set<Socket>();
  #server: Server | null = null;
  port = 0;

  constructor(databaseUrl: string) {
    this.#target = new URL(databaseUrl);
  }

  /** The database URL through the relay. */
  get url(): string {
    const url = new URL(this.#target);
    url.hostname = "127.0.0.1";
    url.port = String(this.port);
    return url.toString();
  }

  async start(): Promise<void> {
    const server = createServer((client) => {
      const upstream = connect(Number(this.#target.port || 5432), this.#target.hostname);
      for (const socket of [client, upstream]) {
        this.#sockets.add(socket);
        socket.on("close", () => this.#sockets.delete(socket));
        socket.on("error", () => {});
      }
      client.pipe(upstream).pipe(client);
      client.on("close", () => upstream.destroy());
      upstream.on("close", () => client.destroy());
    });
    await new Promise<void>((resolve) => server.listen(this.port, "127.0.0.1", resolve));
    this.port = (server.address() as { port: number }).port;
    this.#server = server;
  }

  /** Cuts every connection and closes the port. */
  async stop(): Promise<void> {
    for (const socket of this.#sockets) socket.destroy();
    this.#sockets.clear();
    const server = this.#server;
    this.#server = null;
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

/**
 * A PostgreSQL store on a freshly migrated `schema` whose every connection goes through
 * `relay` (started here), with short timeouts so that a cut shows within seconds.
 */
export async function storeBehindRelay(
  relay: PostgresRelay,
  databaseUrl: string,
  schema: string,
  poolSize: number,
): Promise<DrizzleTaskStore> {
  await migrate(databaseUrl, { schema });
  await relay.start();
  return createPostgresTaskStore({
    url: relay.url,
    schema,
    poolSize,
    operationTimeoutMs: 1500,
    connectTimeoutSeconds: 2,
  });
}
