// The packages as a user gets them. Every publishable package is packed with `pnpm pack`
// (turbo built them before this test) and the tarballs are installed together with npm into
// an empty project under the OS temporary directory, outside the repository, with the
// registry for everything else (zod, drizzle-orm, postgres, PGlite, the MCP SDKs). There:
// every entry point is imported; a consumer of every entry point and the READMEs' TypeScript
// servers type-check under NodeNext and Bundler with the repository's TypeScript; and every
// runnable README example runs, from the README inside the installed package: core's two,
// the root README's existing McpServer with tasks added (driven by both official clients),
// the memory store's, the Drizzle quick start (PGlite and PostgreSQL), the legacy server
// (driven by the @modelcontextprotocol/sdk 1.x client through a 2025-11-25 task with an
// elicitation), the SDK 1.x drop-in with @modelcontextprotocol/sdk as the peer, and the
// extension server (driven by the extension README's client: @modelcontextprotocol/client and
// ext-tasks through `createRawDispatch`, a 2026-07-28 task), and the console's server (its JSON API, as three viewers). The servers' README code listens on port 3000; they run from a copy
// whose port is replaced with a free one (the only change).
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { fileURLToPath } from "node:url";
import postgres from "postgres";
import ts from "typescript";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  freePort,
  npmEnv,
  packPackages,
  publishablePackages,
  readmeBlock,
  root,
  run,
  runNode,
  type Started,
  startServer,
} from "./helpers.js";

const require = createRequire(import.meta.url);
const tsc = require.resolve("typescript/bin/tsc");
const consumerDir = fileURLToPath(new URL("../consumer/", import.meta.url));
const DATABASE_URL = process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";

const manifest = (dir: string) =>
  JSON.parse(readFileSync(join(root, dir, "package.json"), "utf8")) as Record<
    string,
    Record<string, string>
  >;

/** What the project installs besides the tarballs: the ranges the packages themselves use. */
function thirdParty(): string[] {
  const legacy = manifest("packages/legacy");
  const extension = manifest("packages/extension");
  return [
    // The optional peer of @mcp-tasks/legacy/sdk-task-store, at the range it declares.
    `@modelcontextprotocol/sdk@${legacy.peerDependencies!["@modelcontextprotocol/sdk"]}`,
    // What the README servers import next to our packages.
    `@modelcontextprotocol/server@${extension.dependencies!["@modelcontextprotocol/server"]}`,
    `@modelcontextprotocol/node@${legacy.dependencies!["@modelcontextprotocol/node"]}`,
    `zod@${legacy.dependencies!.zod}`,
    // The clients the packages' own tests drive their servers with.
    `@modelcontextprotocol/client@${legacy.devDependencies!["@modelcontextprotocol/client"]}`,
    `@modelcontextprotocol/ext-tasks@${legacy.devDependencies!["@modelcontextprotocol/ext-tasks"]}`,
    `@types/node@${manifest("packages/core").devDependencies!["@types/node"]}`,
  ];
}

let project: string;
const servers: Started[] = [];
const env = () => npmEnv(process.env);

/** The README as installed (the one in the tarball). */
const installedReadme = (name: string) =>
  readFileSync(join(project, "node_modules", name, "README.md"), "utf8");

/** A README's TypeScript server, transpiled as-is to JavaScript, listening on `port`. */
function serverCopy(code: string, port: number): string {
  const listen = '.listen(3000, "127.0.0.1")';
  expect(code.split(listen).length - 1).toBe(1);
  const js = ts.transpileModule(code.replace(listen, `.listen(${port}, "127.0.0.1")`), {
    compilerOptions: {
      module: ts.ModuleKind.ESNext,
      target: ts.ScriptTarget.ES2022,
      verbatimModuleSyntax: true,
    },
  }).outputText;
  return js;
}

beforeAll(async () => {
  project = mkdtempSync(join(tmpdir(), "mcp-tasks-packed-"));
  const tarballs = join(project, "tarballs");
  mkdirSync(tarballs);
  const packed = await packPackages(tarballs);
  expect(packed.map((p) => p.name)).toEqual(publishablePackages().map((p) => p.name));
  writeFileSync(
    join(project, "package.json"),
    `${JSON.stringify({ name: "packed-consumer", private: true, type: "module" }, null, 2)}\n`,
  );
  await run(
    "npm",
    [
      "install",
      "--no-audit",
      "--no-fund",
      ...packed.map((p) => `./tarballs/${basename(p.tarball)}`),
      ...thirdParty(),
    ],
    { cwd: project, env: env() },
  );
  cpSync(consumerDir, project, { recursive: true });
}, 240_000);

afterAll(async () => {
  await Promise.all(servers.map((s) => s.stop()));
  if (project) rmSync(project, { recursive: true, force: true });
});

describe("the packed packages, installed with npm outside the repository", () => {
  it("install together with no unmet or invalid dependency, and every entry point imports", async () => {
    await run("npm", ["ls", "--all"], { cwd: project, env: env() });
    for (const pkg of publishablePackages()) {
      const installed = JSON.parse(
        readFileSync(join(project, "node_modules", pkg.name, "package.json"), "utf8"),
      );
      expect(installed.version).toBe(pkg.manifest.version);
    }
    const { stdout } = await runNode(project, "import-all.mjs", [], env());
    const counts = JSON.parse(stdout) as Record<string, number>;
    expect(Object.keys(counts)).toHaveLength(13);
    for (const [entry, count] of Object.entries(counts)) {
      expect(count, entry).toBeGreaterThan(0);
    }
  });

  it("type-check: a consumer of every entry point and the README servers, under NodeNext and Bundler", async () => {
    writeFileSync(
      join(project, "legacy-server.ts"),
      readmeBlock(installedReadme("@mcp-tasks/legacy"), "## A complete legacy server", "ts"),
    );
    writeFileSync(
      join(project, "extension-server.ts"),
      readmeBlock(installedReadme("@mcp-tasks/extension"), "## Example (`node:http`)", "ts"),
    );
    writeFileSync(
      join(project, "extension-client.ts"),
      readmeBlock(
        installedReadme("@mcp-tasks/extension"),
        "## A client (`@mcp-tasks/extension/client`)",
        "ts",
      ),
    );
    writeFileSync(
      join(project, "extension-fetch-server.ts"),
      readmeBlock(
        installedReadme("@mcp-tasks/extension"),
        "## Example (web-standard `fetch`)",
        "ts",
      ),
    );
    const common = {
      target: "ES2022",
      lib: ["ES2023"],
      strict: true,
      skipLibCheck: true,
      noEmit: true,
      types: ["node"],
    };
    const configs = {
      nodenext: { ...common, module: "NodeNext", moduleResolution: "NodeNext" },
      bundler: { ...common, module: "ESNext", moduleResolution: "Bundler" },
    };
    for (const [name, compilerOptions] of Object.entries(configs)) {
      const file = `tsconfig.${name}.json`;
      const files = [
        "consumer.ts",
        "legacy-server.ts",
        "extension-server.ts",
        "extension-fetch-server.ts",
        "extension-client.ts",
      ];
      writeFileSync(join(project, file), JSON.stringify({ compilerOptions, files }, null, 2));
      await expect(
        run(process.execPath, [tsc, "-p", file], { cwd: project, env: env() }),
        name,
      ).resolves.toBeDefined();
    }
  });

  it("core: the README's examples run", async () => {
    const readme = installedReadme("@mcp-tasks/core");
    writeFileSync(
      join(project, "core-durable.mjs"),
      readmeBlock(readme, "## Durable execution", "js"),
    );
    writeFileSync(join(project, "core-example.mjs"), readmeBlock(readme, "## Example", "js"));
    const durable = await runNode(project, "core-durable.mjs", [], env());
    expect(durable.stderr).toBe("");
    expect(durable.stdout).toContain("kind: 'result'");
    const example = await runNode(project, "core-example.mjs", [], env());
    expect(example.stderr).toBe("");
  });

  it("store-memory: the README's example runs", async () => {
    const readme = installedReadme("@mcp-tasks/store-memory");
    writeFileSync(join(project, "memory-example.mjs"), readmeBlock(readme, "## Example", "js"));
    const { stdout, stderr } = await runNode(project, "memory-example.mjs", [], env());
    expect(stderr).toBe("");
    expect(stdout).toContain("bob: not_found_or_unauthorized");
    expect(stdout).toContain('"text":"answer: accept"');
  });

  it("console: the README's server shows Alice her task, Bob nothing, and takes her answer", async () => {
    const readme = installedReadme("@mcp-tasks/console");
    const port = await freePort();
    const listen = '.listen(3000, "127.0.0.1")';
    const code = readmeBlock(readme, "## Example", "js");
    expect(code.split(listen).length - 1).toBe(1);
    writeFileSync(
      join(project, "console-server.mjs"),
      code.replace(listen, `.listen(${port}, "127.0.0.1")`),
    );
    const base = `http://127.0.0.1:${port}/console`;
    const server = await startServer(project, "console-server.mjs", base, env());
    servers.push(server);
    const get = async (path: string, token: string) =>
      (await fetch(`${base}${path}`, { headers: { authorization: `Bearer ${token}` } })).json();
    const alice = (await get("/api/tasks", "alice-token")) as { tasks: { taskId: string }[] };
    expect(alice.tasks).toHaveLength(1);
    expect(await get("/api/tasks", "bob-token")).toEqual({ tasks: [] });
    const ops = (await get("/api/tasks", "operator-token-change-me")) as {
      tasks: { owner: string }[];
    };
    expect(ops.tasks.map((t) => t.owner)).toEqual(["alice@acme"]);
    const taskId = alice.tasks[0]!.taskId;
    const answered = await fetch(`${base}/api/tasks/${taskId}/input`, {
      method: "POST",
      headers: { authorization: "Bearer alice-token", "content-type": "application/json" },
      body: JSON.stringify({ key: "confirm", action: "accept", content: { confirm: true } }),
    });
    expect(answered.status).toBe(200);
    let status = "";
    for (let i = 0; i < 100 && status !== "completed"; i++) {
      status = ((await get(`/api/tasks/${taskId}`, "alice-token")) as { status: string }).status;
      if (status !== "completed") await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(status).toBe("completed");
  });

  it("store-drizzle: the README's quick start runs on PGlite and on a fresh PostgreSQL database", async () => {
    const readme = installedReadme("@mcp-tasks/store-drizzle");
    writeFileSync(join(project, "drizzle-quickstart.mjs"), readmeBlock(readme, "## Use", "js"));
    const { DATABASE_URL: _, ...withoutUrl } = env();
    const expected = 'completed {"kind":"result","result":{"content":[{"text":"5"';

    const pglite = await runNode(project, "drizzle-quickstart.mjs", [], withoutUrl);
    expect(pglite.stderr).toBe("");
    expect(pglite.stdout).toContain(expected);

    const name = `packed_quickstart_${process.pid}_${Date.now()}`;
    const admin = postgres(DATABASE_URL, { max: 1, onnotice: () => {} });
    await admin.unsafe(`CREATE DATABASE "${name}"`);
    try {
      const url = new URL(DATABASE_URL);
      url.pathname = `/${name}`;
      const onPostgres = await runNode(project, "drizzle-quickstart.mjs", [], {
        ...withoutUrl,
        DATABASE_URL: url.toString(),
      });
      expect(onPostgres.stderr).toBe("");
      expect(onPostgres.stdout).toContain(expected);
    } finally {
      await admin.unsafe(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      await admin.end({ timeout: 5 });
    }
  });

  it("legacy: the README's server completes a 2025-11-25 task for the SDK 1.x client", async () => {
    const readme = installedReadme("@mcp-tasks/legacy");
    const port = await freePort();
    const code = readmeBlock(readme, "## A complete legacy server", "ts");
    writeFileSync(join(project, "legacy-server.mjs"), serverCopy(code, port));
    const url = `http://127.0.0.1:${port}/mcp`;
    const server = await startServer(project, "legacy-server.mjs", url, env());
    servers.push(server);
    const { stdout } = await runNode(project, "legacy-client.mjs", [url], env());
    const seen = JSON.parse(stdout);
    expect(seen.capabilities).toEqual({ list: {}, cancel: {}, requests: { tools: { call: {} } } });
    expect(seen.types[0]).toBe("taskCreated");
    expect(seen.types.at(-1)).toBe("result");
    expect(seen.asked).toEqual(["Deploy api?"]);
    expect(seen.status).toBe("completed");
    expect(seen.result).toEqual([
      { type: "text", text: 'done: {"action":"accept","content":{"ok":true}}' },
    ]);
    await server.stop();
  });

  it("legacy/sdk-task-store: the SDK 1.x drop-in serves an SDK 1.x server's task, SDK installed as the peer", async () => {
    const { stdout } = await runNode(project, "sdk-drop-in.mjs", [], env());
    const seen = JSON.parse(stdout);
    expect(seen.types[0]).toBe("taskCreated");
    expect(seen.types.at(-1)).toBe("result");
    expect(seen.ttl).toBe(60_000);
    expect(seen.result).toEqual([{ type: "text", text: "echo: hi" }]);
    expect(seen.listed).toEqual([[true, "completed"]]);
  });

  it("root README: tasks added to an existing McpServer serve both eras from the packed packages", async () => {
    const readme = readFileSync(join(root, "README.md"), "utf8");
    const port = await freePort();
    writeFileSync(
      join(project, "existing-server.mjs"),
      serverCopy(readmeBlock(readme, "## Add tasks to an existing server", "ts"), port),
    );
    const url = `http://127.0.0.1:${port}/mcp`;
    const server = await startServer(project, "existing-server.mjs", url, env());
    servers.push(server);
    const { stdout } = await runNode(project, "existing-server-clients.mjs", [url], env());
    const seen = JSON.parse(stdout);
    for (const era of ["modern", "legacy"] as const) {
      const add = seen[era].tools.find((t: { name: string }) => t.name === "add");
      expect(add, era).toMatchObject({
        description: "Adds two numbers",
        annotations: { readOnlyHint: true },
        inputSchema: {
          type: "object",
          properties: { a: { type: "number" }, b: { type: "number" } },
        },
      });
      expect(seen[era].add.content, era).toEqual([{ type: "text", text: "5" }]);
      expect(seen[era].bad.isError, era).toBe(true);
      expect(seen[era].bad.content[0].text, era).toMatch(
        /^Input validation error: Invalid arguments for tool add: a: /,
      );
    }
    // The 2025-11-25 listing marks the task tool; the 2026-07-28 one has no `execution`.
    const legacyReport = seen.legacy.tools.find((t: { name: string }) => t.name === "slow_report");
    expect(legacyReport.execution).toEqual({ taskSupport: "optional" });
    expect(seen.legacy.capabilities).toEqual({
      list: {},
      cancel: {},
      requests: { tools: { call: {} } },
    });
    expect(seen.modern.kind).toBe("task");
    expect(seen.modern.outcome.status).toBe("completed");
    expect(seen.modern.outcome.result.content).toEqual([
      { type: "text", text: "Report on tides: all good." },
    ]);
    expect(seen.legacy.types[0]).toBe("taskCreated");
    expect(seen.legacy.types.at(-1)).toBe("result");
    expect(seen.legacy.result.content).toEqual([
      { type: "text", text: "Report on tides: all good." },
    ]);
    await server.stop();
  });

  it("extension: the README's server completes a 2026-07-28 task for the official clients", async () => {
    const readme = installedReadme("@mcp-tasks/extension");
    const port = await freePort();
    writeFileSync(
      join(project, "extension-server.mjs"),
      serverCopy(readmeBlock(readme, "## Example (`node:http`)", "ts"), port),
    );
    const url = `http://127.0.0.1:${port}/mcp`;
    const server = await startServer(project, "extension-server.mjs", url, env());
    servers.push(server);
    // The README's client (the ext-tasks client through `createRawDispatch`), as is but its URL.
    const client = readmeBlock(readme, "## A client (`@mcp-tasks/extension/client`)", "ts");
    const readmeUrl = '"http://127.0.0.1:3000/mcp"';
    expect(client.split(readmeUrl).length - 1).toBe(1);
    writeFileSync(
      join(project, "extension-client.mjs"),
      ts.transpileModule(client.replace(readmeUrl, JSON.stringify(url)), {
        compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 },
      }).outputText,
    );
    const { stdout } = await runNode(project, "extension-client.mjs", [], env());
    const seen = JSON.parse(stdout);
    expect(seen.kind).toBe("task");
    expect(seen.outcome.status).toBe("completed");
    expect(seen.outcome.result.content).toEqual([{ type: "text", text: "5" }]);
    await server.stop();
  });
});
