import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildPackage, DATABASE_URL } from "./helpers.js";

const examplePath = fileURLToPath(new URL("../examples/quickstart.mjs", import.meta.url));
const joinPath = fileURLToPath(new URL("../examples/drizzle-join.mjs", import.meta.url));
const dirs: string[] = [];

/** Runs one of the README's programs as a reader would, from a directory of its own. */
function runExample(env: Record<string, string | undefined>, path = examplePath) {
  const cwd = mkdtempSync(join(tmpdir(), "mcp-tasks-quickstart-"));
  dirs.push(cwd);
  const { DATABASE_URL: _, ...inherited } = process.env;
  return spawnSync(process.execPath, [path], {
    cwd,
    env: { ...inherited, ...env },
    timeout: 60_000,
    encoding: "utf8",
  });
}

/** The example file less its two opening comment lines (how to run it): the README's block. */
const readmeBody = (path: string) => readFileSync(path, "utf8").split("\n").slice(2).join("\n");
const readme = () => readFileSync(new URL("../README.md", import.meta.url), "utf8");

/** Runs `work` with the URL of a fresh PostgreSQL database, dropped afterwards. */
async function withFreshDatabase(work: (url: string) => void): Promise<void> {
  const name = `quickstart_${process.pid}_${Date.now()}`;
  const admin = postgres(DATABASE_URL, { max: 1, onnotice: () => {} });
  await admin.unsafe(`CREATE DATABASE "${name}"`);
  try {
    const url = new URL(DATABASE_URL);
    url.pathname = `/${name}`;
    work(url.toString());
  } finally {
    await admin.unsafe(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    await admin.end({ timeout: 5 });
  }
}

beforeAll(() => buildPackage(), 120_000);
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describe("the README's quick start", () => {
  it("is the program in examples/quickstart.mjs", () => {
    expect(readme()).toContain(readmeBody(examplePath));
  });

  it("runs on embedded PGlite in the working directory", () => {
    const run = runExample({});
    expect(run.stderr).toBe("");
    expect(run.status).toBe(0);
    expect(run.stdout).toContain('completed {"kind":"result","result":{"content":[{"text":"5"');
  });

  it("runs on PostgreSQL from a database URL (a fresh database, dropped afterwards)", async () => {
    await withFreshDatabase((url) => {
      const run = runExample({ DATABASE_URL: url });
      expect(run.stderr).toBe("");
      expect(run.status).toBe(0);
      expect(run.stdout).toContain('completed {"kind":"result","result":{"content":[{"text":"5"');
    });
  });
});

describe("the README's Drizzle join", () => {
  const expected = `${JSON.stringify([
    { project: "Mobile app", status: "completed", tasks: 1 },
    { project: "Website", status: "completed", tasks: 2 },
  ])}\n`;

  it("is the program in examples/drizzle-join.mjs", () => {
    expect(readme()).toContain(readmeBody(joinPath));
  });

  it("runs on a Drizzle database over in-memory PGlite", () => {
    const run = runExample({}, joinPath);
    expect(run.stderr).toBe("");
    expect(run.status).toBe(0);
    expect(run.stdout).toBe(expected);
  });

  it("runs on a Drizzle database over node-postgres (a fresh database, dropped afterwards)", async () => {
    await withFreshDatabase((url) => {
      const run = runExample({ DATABASE_URL: url }, joinPath);
      expect(run.stderr).toBe("");
      expect(run.status).toBe(0);
      expect(run.stdout).toBe(expected);
    });
  });
});
