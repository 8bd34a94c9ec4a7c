// @mcp-tasks/core has three entries by audience: `.` for application code, `./store` for
// store authors, `./testing` for the contract suites. Each public name lives in exactly
// one of them, so an import line says which audience a name is for. Read from source
// (src/), so this needs no build.
import { readdirSync } from "node:fs";
import { join, relative, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { beforeAll, describe, expect, it } from "vitest";
import { packageEntries, readExportNames } from "../../../scripts/api-surface.mjs";

/**
 * Exported by a module for other modules of core only, in no entry. Empty so far; a name
 * added here is deliberately unpublished.
 */
// The runner's parts and its per-run machinery (built and driven by TaskRunner only), the
// contract suites' shared helpers, the listing helpers shared by TaskService and
// OperatorView, TaskService's creation span, and the record copying the lifecycle
// modules share.
const MODULE_ONLY: readonly string[] = [
  "Run",
  "RunCollaborators",
  "RunSettings",
  "RunSlots",
  "RunReports",
  "OutcomeStore",
  "RunSpan",
  "RunLease",
  "LeaseTerms",
  "LeaseHolder",
  "armDeadline",
  "InputRounds",
  "InputRoundsHost",
  "HandlerEnd",
  "OutcomeWrite",
  "handlerOutcome",
  "deadlineOutcome",
  "HANDLER_RETURNED",
  "RunStopState",
  "StopReason",
  "HandlerSlots",
  "ClaimScheduler",
  "ClaimSchedulerOptions",
  "OutcomeSettler",
  "OutcomeSettlerOptions",
  "createTraced",
  "copyExecution",
  "copyRecord",
  "EMPTY",
  "Mutable",
  "NO_KEYS",
  "releasedExecution",
  "collectChanges",
  "expectTaskError",
  "INTERNAL_ERROR_CODE",
  "pageSize",
  "newestQuery",
  "filteredPage",
  "PageSizes",
  "pageSizes",
  "listOwnTasks",
  "listOwnNewest",
  // TaskService's parts: its record re-check, a run's fenced scope, waitFor's match, the
  // no-queue sweep and the store's new task built from a caller's input.
  "verifiedRecord",
  "fencedScope",
  "firstMatching",
  "noOrphans",
  "newTaskOf",
  "ServiceDecisions",
];

const packageDir = fileURLToPath(new URL("..", import.meta.url));
const src = join(packageDir, "src");
const entries = packageEntries(packageDir).map((entry) => ({
  ...entry,
  source: join(src, relative(join(packageDir, "dist"), entry.types).replace(/\.d\.ts$/, ".ts")),
}));
const entrySources = new Set(entries.map((entry) => entry.source));
const modules = (readdirSync(src, { recursive: true }) as string[])
  .filter((file) => file.endsWith(".ts"))
  .map((file) => join(src, file))
  .filter((file) => !entrySources.has(file));

let names: Map<string, { readonly names: readonly string[] }>;

beforeAll(() => {
  names = readExportNames([...entrySources, ...modules]);
}, 120_000);

/** Every entry's exported names. */
function exportedBy(): Map<string, string[]> {
  const where = new Map<string, string[]>();
  for (const entry of entries) {
    for (const name of names.get(entry.source)!.names) {
      where.set(name, [...(where.get(name) ?? []), entry.specifier]);
    }
  }
  return where;
}

describe("core entry points", () => {
  it("are `.`, `./store` and `./testing`", () => {
    expect(entries.map((entry) => [entry.subpath, relative(packageDir, entry.source)])).toEqual([
      [".", join("src", "index.ts")],
      ["./store", join("src", "store-api.ts")],
      ["./testing", join("src", "testing", "index.ts")],
    ]);
  });

  it("export no name twice", () => {
    const twice = [...exportedBy()]
      .filter(([, specifiers]) => specifiers.length > 1)
      .map(([name, specifiers]) => `${name}: ${specifiers.join(", ")}`);
    expect(twice).toEqual([]);
  });

  it("export every name a core module exports (unless listed in MODULE_ONLY)", () => {
    const published = exportedBy();
    const missing = modules.flatMap((file) =>
      names
        .get(file)!
        .names.filter((name) => !published.has(name) && !MODULE_ONLY.includes(name))
        .map((name) => `${name} (${relative(src, file).split(sep).join("/")})`),
    );
    expect(missing).toEqual([]);
  });
});
