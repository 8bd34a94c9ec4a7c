// The public surface of a built package entry, as stable, readable text for snapshot tests
// (each published package's test/api.test.ts). It reads the entry's `.d.ts` with the
// TypeScript compiler API and prints every exported name with its kind and declaration,
// following re-exports into the other `.d.ts` files: types included, comments, `#private`
// and `private` members left out (they are not API). A last section lists the types the
// surface mentions but does not export, with where they can be imported from, so a type a
// user cannot name (or a public type in an unexpected entry) shows up in review.
//
//   node scripts/api-surface.mjs packages/core/dist/index.d.ts
import { existsSync, readFileSync, realpathSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";

const COMPILER_OPTIONS = {
  target: ts.ScriptTarget.ES2022,
  module: ts.ModuleKind.NodeNext,
  moduleResolution: ts.ModuleResolutionKind.NodeNext,
  strict: true,
  skipLibCheck: true,
  noEmit: true,
  types: ["node"],
};

const printer = ts.createPrinter({ removeComments: true, newLine: ts.NewLineKind.LineFeed });

/**
 * The public entries of the package in `packageDir`, from its package.json `exports`: the
 * subpath (`.`, `./store`), the snapshot-friendly name (`index`, `store`) and the absolute
 * `types` and `default` files.
 */
export function packageEntries(packageDir) {
  const manifest = JSON.parse(readFileSync(join(packageDir, "package.json"), "utf8"));
  const exportsField =
    typeof manifest.exports === "string" ? { ".": manifest.exports } : (manifest.exports ?? {});
  return Object.entries(exportsField).map(([subpath, target]) => {
    const types = typeof target === "string" ? target.replace(/\.js$/, ".d.ts") : target.types;
    const js = typeof target === "string" ? target : (target.default ?? target.import);
    if (typeof types !== "string" || typeof js !== "string") {
      throw new Error(`${manifest.name}: exports["${subpath}"] needs "types" and "default"`);
    }
    return {
      subpath,
      specifier: subpath === "." ? manifest.name : `${manifest.name}/${subpath.slice(2)}`,
      name: subpath === "." ? "index" : subpath.slice(2).replaceAll("/", "-"),
      types: resolve(packageDir, types),
      js: resolve(packageDir, js),
    };
  });
}

/**
 * Reads the surface of one or more built `.d.ts` entries (one compiler program for all).
 * Returns, per file: `text` (the printed surface), `names` (every exported name) and
 * `valueNames` (the names that exist at run time: not types, not type-only exports).
 */
export function readApi(dtsFiles) {
  return read(dtsFiles, true);
}

/**
 * Only the exported names (`names`, `valueNames`) of entry files, `.d.ts` or `.ts` source:
 * quicker, and needs no build.
 */
export function readExportNames(files) {
  return read(files, false);
}

function read(paths, withText) {
  const files = paths.map((path) => {
    const file = resolve(path);
    if (!existsSync(file)) throw new Error(`${file} does not exist: build the package first`);
    return realpathSync(file);
  });
  const program = ts.createProgram(files, COMPILER_OPTIONS);
  const checker = program.getTypeChecker();
  const result = new Map();
  files.forEach((file, i) => {
    const source = program.getSourceFile(file);
    if (source === undefined) throw new Error(`cannot read ${file}`);
    result.set(paths[i], describe(program, checker, source, withText));
  });
  return result;
}

/** The printed surface of one built `.d.ts` entry. */
export function apiSurface(dtsFile) {
  return readApi([dtsFile]).get(dtsFile).text;
}

function describe(program, checker, source, withText) {
  const moduleSymbol = checker.getSymbolAtLocation(source);
  const exported = moduleSymbol === undefined ? [] : checker.getExportsOfModule(moduleSymbol);
  const entries = exported
    .map((symbol) => exportEntry(checker, symbol))
    .sort((a, b) => byName(a.name, b.name));
  const names = entries.map((e) => e.name);
  const valueNames = entries.filter((e) => e.isValue).map((e) => e.name);
  if (!withText) return { names, valueNames };
  const exportedDeclarations = new Set(entries.flatMap((e) => e.declarations));

  const blocks = entries.map((entry) => {
    const flags = [entry.kind];
    // Only news for a name that is also a value (a class, say): types are types anyway.
    if (entry.typeOnly && entry.hasValue) flags.push("type-only export");
    const declared = entry.declarations[0] && declarationName(entry.declarations[0]);
    if (declared !== undefined && declared !== entry.name) flags.push(`declared as ${declared}`);
    const body = entry.declarations
      .map((d) => printDeclaration(d) + resolvedBoundHandlers(checker, d))
      .join("\n");
    return `${entry.name}: ${flags.join(", ")}\n${indent(body)}`;
  });

  const referenced = referencedElsewhere(program, checker, entries, exportedDeclarations);
  const header = `${entryLabel(source.fileName)}\n${"=".repeat(entryLabel(source.fileName).length)}`;
  const parts = [header, ...blocks];
  if (referenced.length > 0) {
    parts.push(`Referenced, not exported by this entry:\n${indent(referenced.join("\n"))}`);
  }
  return { text: `${parts.join("\n\n")}\n`, names, valueNames };
}

function exportEntry(checker, symbol) {
  let typeOnly = false;
  let target = symbol;
  const seen = new Set();
  while (target.flags & ts.SymbolFlags.Alias && !seen.has(target)) {
    seen.add(target);
    for (const d of target.declarations ?? []) {
      if (isTypeOnlyAlias(d)) typeOnly = true;
    }
    const next = checker.getImmediateAliasedSymbol(target);
    if (next === undefined) break;
    target = next;
  }
  const declarations = (target.declarations ?? []).filter((d) => !ts.isSourceFile(d));
  const isValue = !typeOnly && (target.flags & ts.SymbolFlags.Value) !== 0;
  return {
    name: symbol.name,
    typeOnly,
    hasValue: (target.flags & ts.SymbolFlags.Value) !== 0,
    isValue,
    kind: kindOf(declarations),
    declarations,
  };
}

function isTypeOnlyAlias(node) {
  if (ts.isExportSpecifier(node) || ts.isImportSpecifier(node)) {
    return node.isTypeOnly || ts.isTypeOnlyImportOrExportDeclaration(node);
  }
  if (ts.isImportClause(node) || ts.isNamespaceImport(node) || ts.isNamespaceExport(node)) {
    return ts.isTypeOnlyImportOrExportDeclaration(node);
  }
  if (ts.isExportDeclaration(node)) return node.isTypeOnly;
  return false;
}

function kindOf(declarations) {
  const kinds = [...new Set(declarations.map(kindOfDeclaration))];
  return kinds.length === 0 ? "unknown" : kinds.join(" + ");
}

function kindOfDeclaration(node) {
  if (ts.isClassDeclaration(node)) {
    return ts.getCombinedModifierFlags(node) & ts.ModifierFlags.Abstract
      ? "abstract class"
      : "class";
  }
  if (ts.isInterfaceDeclaration(node)) return "interface";
  if (ts.isTypeAliasDeclaration(node)) return "type";
  if (ts.isFunctionDeclaration(node)) return "function";
  if (ts.isEnumDeclaration(node)) return "enum";
  if (ts.isModuleDeclaration(node)) return "namespace";
  if (ts.isVariableDeclaration(node)) {
    const flags = node.parent.flags;
    return flags & ts.NodeFlags.Const ? "const" : flags & ts.NodeFlags.Let ? "let" : "var";
  }
  return ts.SyntaxKind[node.kind];
}

function declarationName(node) {
  return node.name !== undefined && ts.isIdentifier(node.name) ? node.name.text : undefined;
}

/** The declaration as written in the `.d.ts`, minus comments, modifiers and private members. */
function printDeclaration(node) {
  const sourceFile = node.getSourceFile();
  let printed = node;
  let prefix = "";
  if (ts.isClassDeclaration(node)) {
    printed = ts.factory.updateClassDeclaration(
      node,
      node.modifiers,
      node.name,
      node.typeParameters,
      node.heritageClauses,
      node.members.filter((member) => !isPrivateMember(member)),
    );
  } else if (ts.isVariableDeclaration(node)) {
    prefix = `${kindOfDeclaration(node)} `;
  }
  const text = printer.printNode(ts.EmitHint.Unspecified, printed, sourceFile);
  const suffix = ts.isVariableDeclaration(node) ? ";" : "";
  return prefix + text.replace(/^(export\s+)?(default\s+)?(declare\s+)?/, "") + suffix;
}

/**
 * `BoundHandlers<typeof HANDLERS>` (core's `bindHandlers`) names its methods through a
 * module-local table, so the declaration alone pins nothing: print the methods it resolves
 * to, with their signatures.
 */
function resolvedBoundHandlers(checker, node) {
  if (
    !ts.isTypeAliasDeclaration(node) ||
    !ts.isTypeReferenceNode(node.type) ||
    node.type.typeName.getText() !== "BoundHandlers"
  ) {
    return "";
  }
  const type = checker.getTypeAtLocation(node.name);
  const flags = ts.TypeFormatFlags.NoTruncation;
  // Types the `.d.ts` does not import print as `import("/abs/path").Name`: keep the name.
  const print = (t) => checker.typeToString(t, node, flags).replace(/import\("[^"]*"\)\./g, "");
  const members = checker
    .getPropertiesOfType(type)
    .map((p) => `${p.name}: ${print(checker.getTypeOfSymbolAtLocation(p, node))};`)
    .sort(byName);
  return `\nresolves to {\n${indent(members.join("\n"))}\n}`;
}

function isPrivateMember(member) {
  if (member.name !== undefined && ts.isPrivateIdentifier(member.name)) return true;
  return (ts.getCombinedModifierFlags(member) & ts.ModifierFlags.Private) !== 0;
}

/**
 * The named types and values the printed declarations refer to that this entry does not
 * export, each with where it can be imported from: a public entry of a workspace package,
 * an npm package, or "not exported" (a type no user can name).
 */
function referencedElsewhere(program, checker, entries, exportedDeclarations) {
  const found = new Map();
  const visit = (node, roots) => {
    let reference;
    if (ts.isTypeReferenceNode(node)) reference = node.typeName;
    else if (ts.isExpressionWithTypeArguments(node)) reference = node.expression;
    else if (ts.isTypeQueryNode(node)) reference = node.exprName;
    if (reference !== undefined) note(reference, roots);
    ts.forEachChild(node, (child) => visit(child, roots));
  };
  const note = (reference, roots) => {
    const location = ts.isQualifiedName(reference)
      ? reference.right
      : ts.isPropertyAccessExpression(reference)
        ? reference.name
        : reference;
    let symbol = checker.getSymbolAtLocation(location);
    if (symbol === undefined) return;
    if (symbol.flags & ts.SymbolFlags.Alias) symbol = checker.getAliasedSymbol(symbol);
    // Type parameters and members (`typeof table.$inferSelect`) are not importable names.
    const notImportable =
      ts.SymbolFlags.TypeParameter | ts.SymbolFlags.ClassMember | ts.SymbolFlags.EnumMember;
    if (symbol.flags & notImportable) return;
    const declaration = symbol.declarations?.[0];
    if (declaration === undefined || exportedDeclarations.has(declaration)) return;
    // Declared inside an exported declaration (a namespace member, say): printed already.
    if (roots.some((root) => contains(root, declaration))) return;
    const origin = originOf(program, declaration, symbol.name);
    if (origin === null) return;
    found.set(`${symbol.name}\0${origin}`, `${symbol.name} <- ${origin}`);
  };
  for (const entry of entries) {
    for (const declaration of entry.declarations) visit(declaration, entry.declarations);
  }
  return [...found.entries()].sort(([a], [b]) => byName(a, b)).map(([, line]) => line);
}

function contains(root, node) {
  return (
    root.getSourceFile() === node.getSourceFile() && node.pos >= root.pos && node.end <= root.end
  );
}

/** Where a declaration can be imported from; `null` for globals (lib, `@types/node`). */
function originOf(program, declaration, name) {
  const sourceFile = declaration.getSourceFile();
  if (program.isSourceFileDefaultLibrary(sourceFile)) return null;
  for (let n = declaration.parent; n !== undefined; n = n.parent) {
    if (ts.isModuleDeclaration(n) && ts.isStringLiteral(n.name)) return `"${n.name.text}"`;
  }
  if (!ts.isExternalModule(sourceFile)) return null;
  const file = sourceFile.fileName;
  const marker = `${sep}node_modules${sep}`;
  const at = file.lastIndexOf(marker);
  if (at !== -1) {
    const parts = file.slice(at + marker.length).split(sep);
    return parts[0].startsWith("@") ? `${parts[0]}/${parts[1]}` : parts[0];
  }
  const packageDir = packageDirOf(file);
  if (packageDir === undefined) return `not exported (${file})`;
  const specifier = publicEntryOf(packageDir, file, name);
  return specifier ?? `not exported (${relative(packageDir, file).replaceAll(sep, "/")})`;
}

const entryIndexes = new Map();

/** The first public entry of the workspace package that exports `file`'s `name`. */
function publicEntryOf(packageDir, file, name) {
  let index = entryIndexes.get(packageDir);
  if (index === undefined) {
    index = new Map();
    entryIndexes.set(packageDir, index);
    const entries = existsSync(join(packageDir, "package.json")) ? packageEntries(packageDir) : [];
    const available = entries.filter((e) => existsSync(e.types));
    const program = ts.createProgram(
      available.map((e) => e.types),
      COMPILER_OPTIONS,
    );
    const checker = program.getTypeChecker();
    for (const e of available) {
      const source = program.getSourceFile(realpathSync(e.types));
      const moduleSymbol = source && checker.getSymbolAtLocation(source);
      if (moduleSymbol === undefined) continue;
      for (const symbol of checker.getExportsOfModule(moduleSymbol)) {
        for (const d of exportEntry(checker, symbol).declarations) {
          const key = `${d.getSourceFile().fileName}#${declarationName(d) ?? symbol.name}`;
          if (!index.has(key)) index.set(key, e.specifier);
        }
      }
    }
  }
  return index.get(`${file}#${name}`);
}

function packageDirOf(file) {
  for (let dir = dirname(file); dir !== dirname(dir); dir = dirname(dir)) {
    if (existsSync(join(dir, "package.json"))) return dir;
  }
  return undefined;
}

/** `@mcp-tasks/core/store (dist/store-api.d.ts)`, or the bare path outside a package. */
function entryLabel(file) {
  const packageDir = packageDirOf(file);
  if (packageDir === undefined) return file;
  const path = relative(packageDir, file).replaceAll(sep, "/");
  const entry = packageEntries(packageDir).find((e) => realpathSync(e.types) === file);
  return entry === undefined ? path : `${entry.specifier} (${path})`;
}

function indent(text) {
  return text
    .split("\n")
    .map((line) => (line.length > 0 ? `  ${line}` : line))
    .join("\n");
}

/** Case-insensitive first, then exact: the same order on every machine (no locale). */
function byName(a, b) {
  const x = a.toLowerCase();
  const y = b.toLowerCase();
  return x < y ? -1 : x > y ? 1 : a < b ? -1 : a > b ? 1 : 0;
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const files = process.argv.slice(2);
  if (files.length === 0) {
    console.error("usage: node scripts/api-surface.mjs <entry.d.ts>...");
    process.exit(2);
  }
  for (const { text } of readApi(files).values()) process.stdout.write(text);
}
