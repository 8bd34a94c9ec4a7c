import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildPackage, DATABASE_URL } from "./helpers.js";

const examplePath = fileURLToPath(new URL("../examples/quickstart.mjs", import.meta.url));
const dirs: string[] = [];

/** Runs the README's program as a reader would, from a directory of its own. */
function runExample(env: Record<string, string | undefined>) {
  const cwd = mkdtempSync(join(tmpdir(), "mcp-tasks-quickstart-"));
  dirs.push(cwd);
  const { DATABASE_URL: _, ...inherited } = process.env;
  return spawnSync(process.execPath, [examplePath], {
    cwd,
    env: { ...inherited, ...env },
    timeout: 60_000,
    encoding: "utf8",
  });
}

beforeAll(() => buildPackage(), 120_000);
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describe("the README's quick start", () => {
  it("is the program in examples/quickstart.mjs", () => {
    const example = readFileSync(examplePath, "utf8");
    // The file opens with two comment lines saying how to run it; the rest is the README's.
    const body = example.split("\n").slice(2).join("\n");
    const readme = readFileSync(new URL("../README.md", import.meta.url), "utf8");
    expect(readme).toContain(body);
  });

  it("runs on embedded PGlite in the working directory", () => {
    const run = runExample({});
    expect(run.stderr).toBe("");
    expect(run.status).toBe(0);
    expect(run.stdout).toContain('completed {"kind":"result","result":{"content":[{"text":"5"');
  });

  it("runs on PostgreSQL from a database URL (a fresh database, dropped afterwards)", async () => {
    const name = `quickstart_${process.pid}_${Date.now()}`;
    const admin = postgres(DATABASE_URL, { max: 1, onnotice: () => {} });
    await admin.unsafe(`CREATE DATABASE "${name}"`);
    try {
      const url = new URL(DATABASE_URL);
      url.pathname = `/${name}`;
      const run = runExample({ DATABASE_URL: url.toString() });
      expect(run.stderr).toBe("");
      expect(run.status).toBe(0);
      expect(run.stdout).toContain('completed {"kind":"result","result":{"content":[{"text":"5"');
    } finally {
      await admin.unsafe(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      await admin.end({ timeout: 5 });
    }
  });
});
