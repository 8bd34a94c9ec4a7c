#!/usr/bin/env node
// Lints the publishable packages as they would be published: builds them, packs each with
// `pnpm pack` into a temporary directory and checks every tarball with
//   - publint (strict: any error, warning or suggestion fails),
//   - @arethetypeswrong/cli under its ESM-only profile (the packages ship no CommonJS),
//   - the manifest rules below (what the issue asked for, kept true): keywords, repository
//     with this package's directory, publishConfig.access "public", MIT with a LICENSE file,
//     Node >= 20.19, ESM, no `workspace:` range left, a released version, and the README's
//     line saying it is ESM-only and needs Node.js >= 20.19.
// Part of `npm test` (scripts/run.mjs, after biome); also `pnpm lint:packages`.
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { publint } from "publint";
import { formatMessage } from "publint/utils";
import { buildPackages, packPackages, publishablePackages, REPOSITORY_URL } from "./pack.mjs";

const require = createRequire(import.meta.url);
const attwPackage = require.resolve("@arethetypeswrong/cli/package.json");
const attwBin = join(dirname(attwPackage), JSON.parse(readFileSync(attwPackage, "utf8")).bin.attw);

const README_LINE = /ESM-only[^\n]*Node\.js (≥|>=) ?20\.19/;
const DEPENDENCY_FIELDS = [
  "dependencies",
  "peerDependencies",
  "optionalDependencies",
  "devDependencies",
];

/** The manifest rules, on the package.json inside the tarball. */
function manifestProblems(manifest, directory, files, readme) {
  const problems = [];
  const expect = (ok, message) => {
    if (!ok) problems.push(message);
  };
  expect(Array.isArray(manifest.keywords) && manifest.keywords.length > 0, "no keywords");
  expect(
    manifest.repository?.type === "git" && manifest.repository?.url === REPOSITORY_URL,
    `repository must be { type: "git", url: "${REPOSITORY_URL}", directory }`,
  );
  expect(
    manifest.repository?.directory === directory,
    `repository.directory must be "${directory}"`,
  );
  expect(manifest.publishConfig?.access === "public", 'publishConfig.access must be "public"');
  expect(manifest.license === "MIT", 'license must be "MIT"');
  expect(files.includes("LICENSE"), "the tarball has no LICENSE file");
  expect(manifest.engines?.node === ">=20.19", 'engines.node must be ">=20.19"');
  expect(manifest.type === "module", 'type must be "module" (ESM-only)');
  expect(
    /^\d+\.\d+\.\d+/.test(manifest.version) && manifest.version !== "0.0.0",
    `version ${manifest.version} is not a release version`,
  );
  for (const field of DEPENDENCY_FIELDS) {
    for (const [name, range] of Object.entries(manifest[field] ?? {})) {
      expect(!String(range).startsWith("workspace:"), `${field}.${name} is still ${range}`);
    }
  }
  expect(
    README_LINE.test(readme ?? ""),
    "README.md must say near the top that the package is ESM-only and needs Node.js ≥ 20.19",
  );
  return problems;
}

/** Reads one file out of a tarball (`tar` is on every machine npm packs on). */
function fromTarball(tarball, path) {
  const out = spawnSync("tar", ["-xzOf", tarball, `package/${path}`], { encoding: "utf8" });
  return out.status === 0 ? out.stdout : undefined;
}

const started = Date.now();
const packages = publishablePackages();
const workDir = mkdtempSync(join(tmpdir(), "mcp-tasks-pack-check-"));
let failures = 0;
try {
  await buildPackages(packages);
  const packed = await packPackages(workDir, packages);
  for (const pkg of packed) {
    const found = [];
    const manifest = JSON.parse(fromTarball(pkg.tarball, "package.json"));
    const head = fromTarball(pkg.tarball, "README.md")?.split("\n").slice(0, 12).join("\n");
    for (const problem of manifestProblems(manifest, pkg.directory, pkg.files, head)) {
      found.push(`manifest: ${problem}`);
    }

    const bytes = readFileSync(pkg.tarball);
    const tarball = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength);
    const lint = await publint({ pack: { tarball }, level: "suggestion", strict: true });
    for (const message of lint.messages) {
      found.push(`publint ${message.type}: ${formatMessage(message, lint.pkg, { color: false })}`);
    }

    const attw = spawnSync(
      process.execPath,
      [attwBin, pkg.tarball, "--profile", "esm-only", "--format", "ascii", "--no-color"],
      { encoding: "utf8" },
    );
    if (attw.status !== 0) found.push(`attw --profile esm-only:\n${attw.stdout}${attw.stderr}`);

    if (found.length === 0) {
      console.log(`pack-check: ${pkg.name}@${pkg.version}: publint, attw (esm-only), manifest ok`);
    } else {
      failures += found.length;
      console.error(`pack-check: ${pkg.name}@${pkg.version}:`);
      for (const line of found) console.error(`  - ${line}`);
    }
  }
} catch (error) {
  failures += 1;
  console.error(`pack-check: ${error.message}`);
} finally {
  rmSync(workDir, { recursive: true, force: true });
}
const seconds = ((Date.now() - started) / 1000).toFixed(1);
if (failures > 0) {
  console.error(`pack-check: ${failures} problem(s) in the packed packages (${seconds}s)`);
  process.exit(1);
}
console.log(`pack-check: ${packages.length} packages packed and clean (${seconds}s)`);
