// The TypeScript snippets of the docs and READMEs, extracted and type-checked as one program
// (test/snippets.test.ts). Every ```ts (or ```typescript) block is a file of its own, a module,
// compiled with the repository's compiler options (tsconfig.base.json: strict,
// exactOptionalPropertyTypes, noUncheckedIndexedAccess, NodeNext) in a scratch directory
// inside this package, so `@mcp-tasks/*` resolve to the workspace packages' built `dist`
// and third-party imports to this package's devDependencies. A block whose info string
// says `fragment` (```ts fragment) is an excerpt that cannot stand alone (a diff against the
// reader's own code) and is not compiled; keep those few.
import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { dirname, join, relative } from "node:path";
import ts from "typescript";
import { root } from "./helpers.js";

/** One fenced block: where it is and its code, indentation of a list item removed. */
export interface Snippet {
  /** The markdown file, relative to the repository root. */
  readonly file: string;
  /** The 1-based line of the opening fence. */
  readonly line: number;
  /** The fence's indentation, removed from every line of `code`. */
  readonly indent: number;
  readonly code: string;
  /** Marked ```ts fragment: not compiled. */
  readonly fragment: boolean;
}

const OPEN = /^( *)(`{3,}|~{3,})\s*([^`]*)$/;
const TS_LANGS = new Set(["ts", "typescript", "mts"]);

/** Every TypeScript fenced block of one markdown text. */
export function extractSnippets(file: string, markdown: string): Snippet[] {
  const lines = markdown.split(/\r?\n/);
  const snippets: Snippet[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = OPEN.exec(lines[i] ?? "");
    if (!open) continue;
    const [, indentText = "", fence = "", info = ""] = open;
    const close = new RegExp(`^ *${fence[0] === "`" ? "`" : "~"}{${fence.length},}\\s*$`);
    let end = i + 1;
    while (end < lines.length && !close.test(lines[end] ?? "")) end++;
    const words = info.trim().split(/\s+/);
    if (TS_LANGS.has(words[0] ?? "")) {
      const indent = indentText.length;
      snippets.push({
        file,
        line: i + 1,
        indent,
        code: lines
          .slice(i + 1, end)
          .map((line) => line.slice(Math.min(indent, line.length - line.trimStart().length)))
          .join("\n"),
        fragment: words.includes("fragment"),
      });
    }
    i = end;
  }
  return snippets;
}

/** The markdown files whose snippets must compile: the READMEs and everything in docs/. */
export function documentedFiles(): string[] {
  const files = ["README.md"];
  const walk = (dir: string) => {
    for (const entry of readdirSync(join(root, dir), { withFileTypes: true })) {
      const path = `${dir}/${entry.name}`;
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith(".md")) files.push(path);
    }
  };
  walk("docs");
  for (const group of ["packages", "apps"]) {
    for (const entry of readdirSync(join(root, group), { withFileTypes: true })) {
      const readme = `${group}/${entry.name}/README.md`;
      if (entry.isDirectory() && readdirSync(join(root, group, entry.name)).includes("README.md")) {
        files.push(readme);
      }
    }
  }
  return files;
}

/** The workspace's `@mcp-tasks/*` packages, by name and directory. */
function workspacePackages(): [string, string][] {
  const found: [string, string][] = [];
  for (const group of ["packages", "apps"]) {
    for (const entry of readdirSync(join(root, group), { withFileTypes: true })) {
      if (!entry.isDirectory()) continue;
      const dir = join(root, group, entry.name);
      try {
        const { name } = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));
        if (typeof name === "string" && name.startsWith("@mcp-tasks/")) found.push([name, dir]);
      } catch {
        // not a package
      }
    }
  }
  return found;
}

/** The repository's compiler options, for type-checking only. */
function compilerOptions(): ts.CompilerOptions {
  const path = join(root, "tsconfig.base.json");
  const config = ts.readConfigFile(path, ts.sys.readFile);
  const { options } = ts.parseJsonConfigFileContent(config.config, ts.sys, dirname(path));
  return { ...options, noEmit: true, declaration: false, declarationMap: false, sourceMap: false };
}

/**
 * Type-checks `snippets` (fragments skipped) as one program; returns each error as
 * `file.md:line:column TSnnnn message`, positions in the markdown file.
 */
export function checkSnippets(snippets: readonly Snippet[]): string[] {
  const scratch = mkdtempSync(join(dirname(import.meta.dirname), ".snippets-"));
  try {
    // Every workspace package by name, also ones this package does not list yet.
    mkdirSync(join(scratch, "node_modules", "@mcp-tasks"), { recursive: true });
    for (const [name, dir] of workspacePackages()) {
      symlinkSync(dir, join(scratch, "node_modules", name), "dir");
    }
    const bySource = new Map<string, Snippet>();
    snippets
      .filter((snippet) => !snippet.fragment)
      .forEach((snippet, n) => {
        const slug = snippet.file.replace(/[^A-Za-z0-9]+/g, "_");
        const path = join(scratch, `${slug}_L${snippet.line}_${n}.ts`);
        // `export {}` makes every snippet a module of its own, as a user's file would be.
        writeFileSync(path, `${snippet.code}\nexport {};\n`);
        bySource.set(path, snippet);
      });
    const program = ts.createProgram([...bySource.keys()], compilerOptions());
    return ts.getPreEmitDiagnostics(program).map((diagnostic) => {
      const message = ts.flattenDiagnosticMessageText(diagnostic.messageText, "\n  ");
      const snippet = diagnostic.file && bySource.get(diagnostic.file.fileName);
      if (!diagnostic.file || snippet === undefined || diagnostic.start === undefined) {
        const where = diagnostic.file ? relative(root, diagnostic.file.fileName) : "tsc";
        return `${where} TS${diagnostic.code} ${message}`;
      }
      const at = diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start);
      return `${snippet.file}:${snippet.line + 1 + at.line}:${snippet.indent + at.character + 1} TS${diagnostic.code} ${message}`;
    });
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}
