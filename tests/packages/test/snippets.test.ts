// Every TypeScript snippet in docs/ and the READMEs compiles (see test/snippets.ts).
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { root } from "./helpers.js";
import { checkSnippets, documentedFiles, extractSnippets } from "./snippets.js";

describe("documentation snippets", () => {
  it("every ```ts block in docs/ and the READMEs type-checks with the repository's settings", () => {
    const snippets = documentedFiles().flatMap((file) =>
      extractSnippets(file, readFileSync(join(root, file), "utf8")),
    );
    // The fragments are few and deliberate (excerpts of the reader's own code).
    const fragments = snippets.filter((snippet) => snippet.fragment);
    expect(
      fragments.length,
      fragments.map((s) => `${s.file}:${s.line}`).join(", "),
    ).toBeLessThanOrEqual(4);
    expect(snippets.length - fragments.length).toBeGreaterThanOrEqual(12);
    expect(checkSnippets(snippets)).toEqual([]);
  }, 120_000);

  it("reports an error at its line and column in the markdown file, and skips fragments", () => {
    const markdown = [
      "# Doc", // 1
      "```ts", // 2
      'const ok: string = "yes";', // 3
      "```", // 4
      "- an item", // 5
      "  ```typescript", // 6
      '  import { owner } from "@mcp-tasks/core";', // 7
      "  const n: number = owner({ principalId: 1 });", // 8
      "  ```", // 9
      "```ts fragment", // 10
      "undefinedThing();", // 11
      "```", // 12
      "```sh", // 13
      "npm test", // 14
      "```", // 15
    ].join("\n");
    const snippets = extractSnippets("docs/example.md", markdown);
    expect(snippets.map((s) => [s.line, s.fragment])).toEqual([
      [2, false],
      [6, false],
      [10, true],
    ]);
    const errors = checkSnippets(snippets);
    expect(errors.length).toBeGreaterThan(0);
    expect(errors.every((error) => error.startsWith("docs/example.md:8:"))).toBe(true);
    expect(errors.join("\n")).toMatch(/^docs\/example\.md:8:\d+ TS2322 /m);
  }, 120_000);
});
