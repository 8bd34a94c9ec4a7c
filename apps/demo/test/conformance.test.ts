import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningServer } from "../src/http-server.js";
import { runScenario, type ScenarioRun, TASK_SCENARIOS } from "./helpers/conformance.js";
import { startDemo } from "./helpers/server.js";

/**
 * The official conformance suite's `tasks-*` scenarios against the demo on 127.0.0.1:0.
 * Every check must pass; a scenario the suite itself marks skipped is reported as skipped
 * (it counts neither as passed nor failed).
 */
describe("official conformance suite, tasks-* scenarios", () => {
  let server: RunningServer;
  const runs: ScenarioRun[] = [];

  beforeAll(async () => {
    server = await startDemo();
  });
  afterAll(async () => {
    await server?.stop();
    const lines = runs.map((run) => {
      const skipped = run.checks.filter((c) => c.status === "SKIPPED").length;
      const verdict =
        run.summary === null
          ? "no summary"
          : `${run.summary.passed}/${run.summary.total} passed, ${run.summary.failed} failed`;
      return `  ${run.scenario}: ${verdict}${skipped > 0 ? `, ${skipped} skipped by the suite` : ""}`;
    });
    console.log(`conformance results:\n${lines.join("\n")}`);
  });

  for (const scenario of TASK_SCENARIOS) {
    it(scenario, { timeout: 240_000 }, async (context) => {
      const run = await runScenario(server.url, scenario);
      runs.push(run);
      expect(run.summary, run.output).not.toBeNull();
      const failing = run.checks.filter((c) => c.status !== "SUCCESS" && c.status !== "SKIPPED");
      expect(failing, run.output).toEqual([]);
      expect(run.summary?.failed, run.output).toBe(0);
      expect(run.summary?.warnings, run.output).toBe(0);
      expect(run.exitCode, run.output).toBe(0);
      const skipped = run.checks.filter((c) => c.status === "SKIPPED");
      if (skipped.length > 0) {
        // Skipped by the suite itself: nothing was checked, so nothing may be counted as passed.
        expect(run.summary?.passed).toBe(run.checks.length - skipped.length);
        context.skip(`skipped by the suite: ${skipped.map((c) => c.text).join("; ")}`);
      } else {
        expect(run.checks.length).toBeGreaterThan(0);
        expect(run.summary?.passed).toBe(run.summary?.total);
      }
    });
  }
});
