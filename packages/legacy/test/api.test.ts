import { readFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import * as main from "../src/index.js";
import * as sdkTaskStore from "../src/sdk-task-store.js";

function kinds(module: Record<string, unknown>): string[] {
  return Object.keys(module)
    .sort()
    .map((name) => {
      const value = module[name];
      const kind =
        typeof value === "function"
          ? /^class\b/.test(Function.prototype.toString.call(value))
            ? "class"
            : "function"
          : typeof value;
      return `${name}: ${kind}`;
    });
}

describe("public API (frozen: a change here must be deliberate)", () => {
  it("@mcp-tasks/legacy exports", () => {
    expect(kinds(main)).toMatchSnapshot();
  });

  it("@mcp-tasks/legacy/sdk-task-store exports", () => {
    expect(kinds(sdkTaskStore)).toMatchSnapshot();
  });

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
