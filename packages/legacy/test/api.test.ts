// Every entry's public surface (`.` and `./sdk-task-store`), pinned (see
// scripts/api-pin.mjs; update with `-u`), and the README's server kept in sync.
import { readFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { describePublicApi } from "../../../scripts/api-pin.mjs";

describePublicApi(import.meta.url);

describe("the README", () => {
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

  it("the README's SDK 1.x program is test/sdk1-readme-server.ts, which type-checks and runs", async () => {
    const readme = await readFile(new URL("../README.md", import.meta.url), "utf8");
    const section = readme.slice(readme.indexOf("## `@mcp-tasks/legacy/sdk-task-store`"));
    const block = /```ts\n([\s\S]*?)```/.exec(section)?.[1];
    const source = (
      await readFile(new URL("./sdk1-readme-server.ts", import.meta.url), "utf8")
    ).replace('"../src/sdk-task-store.js"', '"@mcp-tasks/legacy/sdk-task-store"');
    // It runs in test/sdk1-restart.test.ts.
    expect(block).toBe(source);
    expect(source).toContain("SdkTaskStore.bindTransport(created);");
  });
});
