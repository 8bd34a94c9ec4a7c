// The root `npm run demo` (scripts/run.mjs) passes each flag to the demo once: its defaults
// (the embedded store in the repository's .mcp-tasks) only where the user chose nothing.
import { describe, expect, it } from "vitest";
import { demoArguments } from "../../../scripts/demo-args.mjs";
import { parseConfig } from "../src/config.js";

const DIR = "/repo/.mcp-tasks";

describe("npm run demo: the demo's arguments", () => {
  it("defaults to PGlite in the repository's .mcp-tasks", () => {
    expect(demoArguments([], {}, DIR)).toEqual(["--store", "pglite", "--data-dir", DIR]);
    expect(demoArguments(["--port", "0"], {}, DIR)).toEqual([
      "--store",
      "pglite",
      "--data-dir",
      DIR,
      "--port",
      "0",
    ]);
  });

  it("passes a chosen store alone, in either flag form, and no data directory it does not use", () => {
    expect(demoArguments(["--store", "memory"], {}, DIR)).toEqual(["--store", "memory"]);
    expect(demoArguments(["--store=postgres", "--port", "0"], {}, DIR)).toEqual([
      "--store=postgres",
      "--port",
      "0",
    ]);
    expect(demoArguments(["--store", "pglite"], {}, DIR)).toEqual([
      "--data-dir",
      DIR,
      "--store",
      "pglite",
    ]);
    expect(demoArguments(["--data-dir", "/tmp/x"], {}, DIR)).toEqual([
      "--store",
      "pglite",
      "--data-dir",
      "/tmp/x",
    ]);
  });

  it("leaves what the environment chose to the environment", () => {
    expect(demoArguments([], { MCP_TASKS_STORE: "memory" }, DIR)).toEqual([]);
    expect(demoArguments([], { PGLITE_DIR: "/data" }, DIR)).toEqual(["--store", "pglite"]);
    expect(demoArguments([], { MCP_TASKS_STORE: "" }, DIR)).toEqual([
      "--store",
      "pglite",
      "--data-dir",
      DIR,
    ]);
  });

  it("gives the demo's own parser what the user asked for", () => {
    const config = parseConfig(demoArguments(["--store", "memory"], {}, DIR), {});
    expect(config.store).toBe("memory");
    const durable = parseConfig(demoArguments([], {}, DIR), {});
    expect([durable.store, durable.dataDir]).toEqual(["pglite", DIR]);
  });
});
