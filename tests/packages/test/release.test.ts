// The release flow, `pnpm version-packages` (changeset version) then `pnpm release`
// (pnpm build && changeset publish), tested without publishing anything:
//   - `pnpm publish --dry-run` for every package in this repository, the very command
//     changesets runs per package, against a stand-in registry on 127.0.0.1 that must
//     receive no upload;
//   - the whole flow for real on a copy of the workspace (this repository's changesets plus
//     one for every package): `changeset version`, then `changeset publish` into the
//     stand-in registry, which receives each package once, at the version changesets
//     planned, public, with every `workspace:` range turned into the released version; a
//     second `changeset publish` then finds nothing to publish. The copy is not a git
//     repository, so it publishes with `--no-git-tag` (in the repository, `pnpm release`
//     also tags each release). Its packages are the ones turbo built for this test; the
//     workspace links `pnpm install` would make between them are made by hand.
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { npmEnv, publishablePackages, root, run } from "./helpers.js";
import { StandInRegistry } from "./registry.js";

const require = createRequire(import.meta.url);
const changesetsPackage = require.resolve("@changesets/cli/package.json");
const changeset = join(
  dirname(changesetsPackage),
  JSON.parse(readFileSync(changesetsPackage, "utf8")).bin.changeset,
);
const getReleasePlan: (cwd: string) => Promise<{
  releases: { name: string; type: string; newVersion: string }[];
}> = createRequire(changesetsPackage)("@changesets/get-release-plan").default;
const rootManifest = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
const TOKEN = "stand-in-token";
const DEPENDENCY_FIELDS = [
  "dependencies",
  "devDependencies",
  "peerDependencies",
  "optionalDependencies",
];

let registry: StandInRegistry;
let registryUrl: string;
let work: string;
let releaseEnv: NodeJS.ProcessEnv;

/** Every workspace package (pnpm-workspace.yaml's `dir/*` globs): name → directory. */
function workspacePackages(base: string): Map<string, string> {
  const yaml = readFileSync(join(base, "pnpm-workspace.yaml"), "utf8");
  const globs = [...yaml.matchAll(/^\s*-\s*["']?([^"'\s]+)\/\*["']?\s*$/gm)].map((m) => m[1]!);
  const found = new Map<string, string>();
  for (const glob of globs) {
    const parent = join(base, glob);
    if (!existsSync(parent)) continue;
    for (const entry of readdirSync(parent, { withFileTypes: true })) {
      const file = join(parent, entry.name, "package.json");
      if (!entry.isDirectory() || !existsSync(file)) continue;
      found.set(JSON.parse(readFileSync(file, "utf8")).name, join(glob, entry.name));
    }
  }
  return found;
}

beforeAll(async () => {
  registry = new StandInRegistry();
  registryUrl = await registry.start();
  work = mkdtempSync(join(tmpdir(), "mcp-tasks-release-"));
  // pnpm on PATH for changesets (it runs `pnpm publish`), at the pinned version, found
  // before the registry is pointed at the stand-in.
  const { stdout } = await run(
    "npx",
    ["-y", "-p", rootManifest.packageManager, "-c", "command -v pnpm"],
    { cwd: work, env: npmEnv() },
  );
  const bin = join(work, "bin");
  mkdirSync(bin);
  symlinkSync(stdout.trim(), join(bin, "pnpm"));
  const host = registryUrl.replace(/^http:/, "");
  const npmrc = join(work, "npmrc");
  writeFileSync(
    npmrc,
    [
      `registry=${registryUrl}`,
      `${host}:_authToken=${TOKEN}`,
      "update-notifier=false",
      "audit=false",
      "fund=false",
    ].join("\n"),
  );
  releaseEnv = {
    ...npmEnv(),
    PATH: `${bin}:${process.env.PATH}`,
    npm_config_registry: registryUrl,
    npm_config_userconfig: npmrc,
  };
}, 60_000);

afterAll(async () => {
  await registry?.stop();
  if (work) rmSync(work, { recursive: true, force: true });
});

describe("the release flow", () => {
  it("root scripts: version-packages is changeset version, release is pnpm build && changeset publish", () => {
    expect(rootManifest.scripts["version-packages"]).toBe("changeset version");
    expect(rootManifest.scripts.release).toBe("pnpm build && changeset publish");
    const config = JSON.parse(readFileSync(join(root, ".changeset/config.json"), "utf8"));
    expect(config.access).toBe("public");
  });

  it("pnpm publish --dry-run: every package would publish its build, README and LICENSE, and nothing is uploaded", async () => {
    for (const pkg of publishablePackages()) {
      const { stdout } = await run(
        "pnpm",
        [
          "publish",
          "--dry-run",
          "--no-git-checks",
          "--access",
          "public",
          "--tag",
          "latest",
          "--json",
        ],
        { cwd: pkg.dir, env: releaseEnv },
      );
      const parsed = JSON.parse(stdout);
      const report = parsed[pkg.name] ?? parsed;
      expect(report.name).toBe(pkg.name);
      expect(report.version).toBe(pkg.manifest.version);
      const files = report.files.map((f: { path: string }) => f.path);
      expect(files).toEqual(expect.arrayContaining(["LICENSE", "README.md", "package.json"]));
      const exportsField = pkg.manifest.exports as Record<string, Record<string, string>>;
      for (const target of Object.values(exportsField)) {
        expect(files).toContain(target.types!.replace(/^\.\//, ""));
        expect(files).toContain(target.default!.replace(/^\.\//, ""));
      }
    }
    expect(registry.uploads).toEqual([]);
    expect(registry.requests.filter((r) => !r.startsWith("GET"))).toEqual([]);
  }, 120_000);

  it("changeset version, then changeset publish: each package reaches the registry once, at its planned version", async () => {
    // A copy of the workspace: root manifests, .changeset, every workspace package's
    // manifest, and the publishable packages whole (their builds included).
    const copy = join(work, "repo");
    mkdirSync(copy);
    for (const file of ["package.json", "pnpm-workspace.yaml"]) {
      cpSync(join(root, file), join(copy, file));
    }
    cpSync(join(root, ".changeset"), join(copy, ".changeset"), { recursive: true });
    const all = workspacePackages(root);
    const publishable = publishablePackages();
    for (const [, dir] of all) {
      mkdirSync(join(copy, dir), { recursive: true });
      cpSync(join(root, dir, "package.json"), join(copy, dir, "package.json"));
    }
    for (const pkg of publishable) {
      cpSync(pkg.dir, join(copy, pkg.directory), {
        recursive: true,
        filter: (source) => !/[/\\](node_modules|\.turbo|\.mcp-tasks)$/.test(source),
      });
    }
    // changesets loads its changelog generator from here.
    symlinkSync(join(root, "node_modules"), join(copy, "node_modules"));
    // The links `pnpm install` makes between workspace packages (pnpm publish reads the
    // versions it writes in place of `workspace:` ranges through them).
    for (const pkg of publishable) {
      const manifest = JSON.parse(readFileSync(join(copy, pkg.directory, "package.json"), "utf8"));
      for (const field of DEPENDENCY_FIELDS) {
        for (const [dep, range] of Object.entries<string>(manifest[field] ?? {})) {
          if (!range.startsWith("workspace:") || !all.has(dep)) continue;
          const link = join(copy, pkg.directory, "node_modules", dep);
          mkdirSync(dirname(link), { recursive: true });
          symlinkSync(join(copy, all.get(dep)!), link);
        }
      }
    }
    // One more changeset, so every package has something to release.
    writeFileSync(
      join(copy, ".changeset", "release-flow-test.md"),
      `---\n${publishable.map((p) => `"${p.name}": patch`).join("\n")}\n---\n\nRelease flow test.\n`,
    );

    const changesetEnv = releaseEnv;
    // The plan `changeset status` prints (which needs git history; the copy has none).
    const plan = await getReleasePlan(copy);
    const planned = new Map(
      plan.releases.filter((r) => r.type !== "none").map((r) => [r.name, r.newVersion]),
    );
    expect([...planned.keys()].sort()).toEqual(publishable.map((p) => p.name).sort());

    await run(process.execPath, [changeset, "version"], { cwd: copy, env: changesetEnv });
    expect(readdirSync(join(copy, ".changeset")).filter((f) => f.endsWith(".md"))).toEqual([
      "README.md",
    ]);
    for (const pkg of publishable) {
      const dir = join(copy, pkg.directory);
      const manifest = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));
      expect(manifest.version, pkg.name).toBe(planned.get(pkg.name));
      expect(readFileSync(join(dir, "CHANGELOG.md"), "utf8")).toContain(
        `## ${planned.get(pkg.name)}`,
      );
    }

    const publish = () =>
      run(process.execPath, [changeset, "publish", "--no-git-tag"], {
        cwd: copy,
        env: changesetEnv,
      });
    await publish();
    expect(registry.uploads.map((u) => u.name).sort()).toEqual(
      publishable.map((p) => p.name).sort(),
    );
    for (const upload of registry.uploads) {
      const version = planned.get(upload.name)!;
      expect(upload.version).toBe(version);
      expect(upload.distTags).toEqual({ latest: version });
      expect(upload.access).toBe("public");
      expect(upload.authorization).toBe(`Bearer ${TOKEN}`);
      expect(upload.manifest.version).toBe(version);
      expect(upload.files).toEqual(
        expect.arrayContaining(["LICENSE", "README.md", "package.json", "dist/index.js"]),
      );
      expect(JSON.stringify(upload.manifest)).not.toContain("workspace:");
      for (const field of ["dependencies", "peerDependencies"]) {
        const deps = (upload.manifest[field] ?? {}) as Record<string, string>;
        for (const [dep, range] of Object.entries(deps)) {
          if (planned.has(dep))
            expect(range, `${upload.name} → ${dep}`).toBe(`^${planned.get(dep)}`);
        }
      }
    }

    // Published already: a second run (e.g. after a partial failure) uploads nothing.
    const before = registry.uploads.length;
    await publish();
    expect(registry.uploads).toHaveLength(before);
  }, 150_000);
});
