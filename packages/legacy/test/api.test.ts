// The public surface of every entry in package.json "exports" (`.` and `./sdk-task-store`),
// read from the built `.d.ts` (turbo builds before it tests) by scripts/api-surface.mjs: it
// must match the text pinned in __snapshots__/<entry>.api.txt, and the entry's runtime
// exports must be exactly the values it declares. After a deliberate API change, run
// `npx vitest run test/api.test.ts -u` and review the snapshot diff with the change.
import { readFile } from "node:fs/promises";
import { fileURLToPath, pathToFileURL } from "node:url";
import { beforeAll, describe, expect, it } from "vitest";
import { type ApiSurface, packageEntries, readApi } from "../../../scripts/api-surface.mjs";

const entries = packageEntries(fileURLToPath(new URL("..", import.meta.url)));
let api: Map<string, ApiSurface>;

beforeAll(() => {
  api = readApi(entries.map((entry) => entry.types));
}, 120_000);

describe("public API (frozen: a change here must be deliberate)", () => {
  for (const entry of entries) {
    it(`${entry.specifier}: declared surface`, async () => {
      await expect(api.get(entry.types)!.text).toMatchFileSnapshot(
        `./__snapshots__/${entry.name}.api.txt`,
      );
    });

    it(`${entry.specifier}: runtime exports are the declared values`, async () => {
      const loaded: Record<string, unknown> = await import(pathToFileURL(entry.js).href);
      expect(Object.keys(loaded).sort()).toEqual([...api.get(entry.types)!.valueNames].sort());
    });
  }

  it("the README's complete server is test/readme-server.ts, which type-checks", async () => {
    const readme = await readFile(new URL("../README.md", import.meta.url), "utf8");
    const block = /## A complete legacy server[\s\S]*?```ts\n([\s\S]*?)```/.exec(readme)?.[1];
    const source = (await readFile(new URL("./readme-server.ts", import.meta.url), "utf8")).replace(
      '"../src/index.js"',
      '"@mcp-tasks/legacy"',
    );
    expect(block).toBe(source);
    expect(source.trimEnd().split("\n").length).toBeLessThan(40);
  });
});
