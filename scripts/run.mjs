#!/usr/bin/env node
// Entry point for the README's quick start. It needs only Node.js and npm: pnpm comes
// from npx at the exact version pinned in package.json, so no global install is assumed.
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const { packageManager } = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
const task = process.argv[2];
const rest = process.argv.slice(3);

const pipelines = {
  // Lint and type errors fail the suite like a failing test does.
  test: [
    ["exec", "biome", "check", "."],
    ["exec", "turbo", "run", "typecheck", "test", "--concurrency=1"],
  ],
  bench: [["exec", "turbo", "run", "bench", "--concurrency=1"]],
  // The embedded, durable store by default; later flags win (`npm run demo -- --store memory`).
  demo: [
    ["exec", "turbo", "run", "build", "--filter=@mcp-tasks/demo..."],
    [
      "--filter",
      "@mcp-tasks/demo",
      "start",
      "--store",
      "pglite",
      "--data-dir",
      join(root, ".mcp-tasks"),
      ...rest,
    ],
  ],
};

if (!pipelines[task]) {
  console.error(`usage: node scripts/run.mjs <${Object.keys(pipelines).join("|")}>`);
  process.exit(2);
}

function pnpm(args) {
  const npx = process.platform === "win32" ? "npx.cmd" : "npx";
  const run = spawnSync(npx, ["-y", packageManager, ...args], { cwd: root, stdio: "inherit" });
  if (run.error) throw run.error;
  if (run.status !== 0) process.exit(run.status ?? 1);
}

pnpm(["install"]);
for (const step of pipelines[task]) pnpm(step);
