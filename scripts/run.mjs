#!/usr/bin/env node
// Entry point for the README's quick start. It needs only Node.js and npm: pnpm comes
// from npx at the exact version pinned in package.json, so no global install is assumed.
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { demoArguments } from "./demo-args.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const { packageManager } = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
const task = process.argv[2];
const rest = process.argv.slice(3);

const npx = process.platform === "win32" ? "npx.cmd" : "npx";
/** The Node.js lines tested besides the one running this script (the whole suite). */
const OTHER_NODE_LINES = ["22", "24"];
/** The packages whose unit suites run on every line (no browser; a few PostgreSQL cases). */
const UNIT_SUITES = [
  "packages/core",
  "packages/store-memory",
  "packages/extension",
  "packages/legacy",
];

// A step is pnpm arguments, or a command of its own (with a label and a directory).
const pipelines = {
  // Lint and type errors fail the suite like a failing test does.
  test: [
    ["exec", "biome", "check", "."],
    // The packages as published: publint, attw --profile esm-only, manifest rules.
    ["exec", "node", "scripts/pack-check.mjs"],
    ["exec", "turbo", "run", "typecheck", "test", "--concurrency=1"],
    // Node 20 is past its end of life (April 2026): the unit suites of the pure packages
    // also run on the maintained lines, each with the `node` npm package's binary (vitest's
    // workers start from process.execPath, so they run on it too).
    ...OTHER_NODE_LINES.flatMap((line) =>
      UNIT_SUITES.map((dir) => ({
        label: `node ${line}: ${dir}`,
        command: npx,
        args: ["-y", "-p", `node@${line}`, "--", "node", "./node_modules/vitest/vitest.mjs", "run"],
        cwd: join(root, dir),
      })),
    ),
  ],
  bench: [["exec", "turbo", "run", "bench", "--concurrency=1"]],
  // The embedded, durable store by default, unless the user chose one (scripts/demo-args.mjs).
  demo: [
    ["exec", "turbo", "run", "build", "--filter=@mcp-tasks/demo..."],
    [
      "--filter",
      "@mcp-tasks/demo",
      "start",
      ...demoArguments(rest, process.env, join(root, ".mcp-tasks")),
    ],
  ],
};

if (!pipelines[task]) {
  console.error(`usage: node scripts/run.mjs <${Object.keys(pipelines).join("|")}>`);
  process.exit(2);
}

// Totals of every vitest run in the output, for one closing line over the whole suite.
const totals = { passed: 0, failed: 0, skipped: 0, failedFiles: 0 };
const ANSI = new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*m`, "g");
function count(text) {
  for (const line of text.replace(ANSI, "").split("\n")) {
    // A file that fails before its tests run (a hook, an import) counts no failed test.
    const files = /^\S*:?\s*Test Files\s+(\d+) failed/.exec(line.trim());
    if (files) totals.failedFiles += Number(files[1]);
    const tests = /^\S*:?\s*Tests\s+(.*)\(\d+\)\s*$/.exec(line.trim());
    if (!tests) continue;
    for (const [, n, kind] of tests[1].matchAll(/(\d+) (passed|failed|skipped)/g)) {
      totals[kind] += Number(n);
    }
  }
}

let child = null;
function pnpm(args, env = process.env) {
  return run(npx, ["-y", packageManager, ...args], root, env);
}

function run(command, args, cwd, env) {
  return new Promise((resolve, reject) => {
    child = spawn(command, args, { cwd, env, stdio: ["inherit", "pipe", "inherit"] });
    let pending = "";
    child.stdout.on("data", (chunk) => {
      process.stdout.write(chunk);
      pending += chunk.toString();
      const cut = pending.lastIndexOf("\n");
      if (cut >= 0) {
        count(pending.slice(0, cut));
        pending = pending.slice(cut + 1);
      }
    });
    child.on("error", reject);
    child.on("close", (code) => {
      count(pending);
      resolve(code ?? 1);
    });
  });
}

// Ctrl-C, SIGTERM, SIGHUP: the running step is told too, the PostgreSQL started for the run
// (if any) is stopped and removed, and no further step starts.
let database = null;
let interrupted = false;
const usesPostgres = task === "test" || task === "bench";
const SIGNALS = usesPostgres ? { SIGHUP: 1, SIGINT: 2, SIGTERM: 15 } : {};
for (const [signal, number] of Object.entries(SIGNALS)) {
  process.on(signal, async () => {
    interrupted = true;
    if (child && child.exitCode === null) child.kill(signal);
    await database?.stop();
    process.exit(128 + number);
  });
}

let status = await pnpm(["install"]);
let env = process.env;
// The test and bench suites read DATABASE_URL: the server there when one answers, else a
// PostgreSQL from npm for this run only (scripts/postgres.mjs).
if (status === 0 && usesPostgres) {
  const { providePostgres } = await import("./postgres.mjs");
  try {
    database = await providePostgres();
  } catch (error) {
    console.error(`postgres: ${error.message}`);
    status = 1;
  }
  if (database) {
    console.log(database.line);
    env = { ...process.env, DATABASE_URL: database.url };
  }
}
for (const step of pipelines[task]) {
  if (status !== 0 || interrupted) break;
  if (Array.isArray(step)) status = await pnpm(step, env);
  else {
    console.log(`\n== ${step.label}`);
    status = await run(step.command, step.args, step.cwd, env);
  }
}
await database?.stop();
if (task === "test") {
  const skipped = totals.skipped > 0 ? `, ${totals.skipped} skipped` : "";
  const files = totals.failedFiles > 0 ? `, ${totals.failedFiles} test files failed` : "";
  console.log(`\ntests: ${totals.passed} passed, ${totals.failed} failed${skipped}${files}`);
  if (status !== 0) console.log(`test run FAILED (exit ${status})`);
}
process.exit(status);
