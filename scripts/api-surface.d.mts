/** One public entry of a package, from its package.json `exports`. */
export interface PackageEntry {
  /** The `exports` key: `.`, `./store`. */
  readonly subpath: string;
  /** What users import: `@mcp-tasks/core`, `@mcp-tasks/core/store`. */
  readonly specifier: string;
  /** A file-name-friendly name: `index` for `.`, else the subpath without `./`. */
  readonly name: string;
  /** The absolute path of the entry's `.d.ts` (`types`). */
  readonly types: string;
  /** The absolute path of the entry's JavaScript (`default`). */
  readonly js: string;
}

/** The surface of one entry. */
export interface ApiSurface {
  /** Every exported name with its kind and declaration, as stable text. */
  readonly text: string;
  /** Every exported name, types included. */
  readonly names: readonly string[];
  /** The names that exist at run time (no types, no type-only exports). */
  readonly valueNames: readonly string[];
}

/** The public entries of the package in `packageDir`. */
export function packageEntries(packageDir: string): PackageEntry[];

/** Reads the surfaces of built `.d.ts` entries (or `.ts` sources), keyed by the given path. */
export function readApi(files: readonly string[]): Map<string, ApiSurface>;

/** Only the exported names of entry files (`.d.ts` or `.ts` source); needs no build. */
export function readExportNames(
  files: readonly string[],
): Map<string, Pick<ApiSurface, "names" | "valueNames">>;

/** The printed surface of one built `.d.ts` entry. */
export function apiSurface(dtsFile: string): string;
