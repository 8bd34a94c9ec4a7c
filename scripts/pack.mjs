// The publishable packages as a user gets them: every non-private package under packages/,
// built and packed with `pnpm pack` (which rewrites `workspace:^` to real version ranges),
// exactly what `changeset publish` (through `pnpm publish`) would upload.
//
// Used by scripts/pack-check.mjs (publint, attw and the manifest rules, in `npm test`'s lint
// step) and by tests/packages (the tarballs installed with npm outside the repository).
import { spawn } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

export const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const { packageManager } = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
const npx = process.platform === "win32" ? "npx.cmd" : "npx";

/** The repository URL every package.json points to (`repository.url`). */
export const REPOSITORY_URL = "git+https://github.com/mcp-tasks/mcp-tasks.git";

/** Every non-private package under packages/, by directory name. */
export function publishablePackages() {
  const dir = join(root, "packages");
  return readdirSync(dir, { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => {
      const packageDir = join(dir, entry.name);
      let manifest;
      try {
        manifest = JSON.parse(readFileSync(join(packageDir, "package.json"), "utf8"));
      } catch {
        return undefined;
      }
      return {
        name: manifest.name,
        dir: packageDir,
        directory: `packages/${entry.name}`,
        manifest,
      };
    })
    .filter((pkg) => pkg !== undefined && pkg.manifest.private !== true)
    .sort((a, b) => a.name.localeCompare(b.name));
}

/**
 * Runs a command; resolves with its output, rejects (with the output) on a non-zero exit.
 * `quiet` keeps the output off the terminal.
 */
export function run(command, args, { cwd = root, env = process.env, quiet = true } = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk) => {
      stdout += chunk;
      if (!quiet) process.stdout.write(chunk);
    });
    child.stderr.on("data", (chunk) => {
      stderr += chunk;
      if (!quiet) process.stderr.write(chunk);
    });
    child.on("error", reject);
    child.on("close", (code, signal) => {
      if (code === 0) resolve({ stdout, stderr });
      else {
        const error = new Error(
          `${command} ${args.join(" ")} (in ${cwd}) exited with ${code ?? signal}\n${stdout}${stderr}`,
        );
        Object.assign(error, { stdout, stderr, code });
        reject(error);
      }
    });
  });
}

/** Runs pnpm at the version pinned in the root package.json (through npx, like run.mjs). */
export function pnpm(args, options) {
  return run(npx, ["-y", packageManager, ...args], options);
}

/** Builds the publishable packages (turbo: a no-op when nothing changed). */
export async function buildPackages(packages = publishablePackages()) {
  await pnpm([
    "exec",
    "turbo",
    "run",
    "build",
    "--output-logs=errors-only",
    ...packages.map((pkg) => `--filter=${pkg.name}`),
  ]);
}

/**
 * Packs every publishable package into `destination` with `pnpm pack` (built beforehand:
 * see buildPackages). Resolves with one entry per package: its name, version, directory
 * (absolute, and relative to the repository), tarball path and packed file list.
 */
export async function packPackages(destination, packages = publishablePackages()) {
  const { stdout } = await pnpm([
    "--recursive",
    ...packages.map((pkg) => `--filter=${pkg.name}`),
    "pack",
    "--pack-destination",
    destination,
    "--json",
  ]);
  const packed = JSON.parse(stdout);
  const list = Array.isArray(packed) ? packed : [packed];
  return packages.map((pkg) => {
    const entry = list.find((p) => p.name === pkg.name);
    if (!entry) throw new Error(`pnpm pack did not pack ${pkg.name}`);
    return {
      name: pkg.name,
      version: entry.version,
      dir: pkg.dir,
      directory: pkg.directory,
      tarball: entry.filename,
      files: entry.files.map((file) => file.path),
    };
  });
}

/**
 * The environment for npm run in a project outside the repository: without the
 * `npm_config_*`, `npm_package_*` and `npm_lifecycle_*` variables pnpm sets for its scripts
 * (`npm_config_local_prefix` would send the install into the repository), keeping only the
 * ones that say how to reach the registry (or to stay off it: `offline`, `prefer_offline`).
 */
export function npmEnv(env = process.env) {
  const keep =
    /^npm_config_(registry|@[^:]+:registry|cafile|ca|strict_ssl|https?_proxy|proxy|noproxy|cache|userconfig|globalconfig|offline|prefer_offline)$/i;
  const out = {};
  for (const [key, value] of Object.entries(env)) {
    if (/^(npm_|pnpm_|PNPM_)/i.test(key) && !keep.test(key)) continue;
    if (key === "INIT_CWD") continue;
    out[key] = value;
  }
  return out;
}
