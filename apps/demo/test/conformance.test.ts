import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningServer } from "../src/http-server.js";
import { runScenario, type ScenarioRun, TASK_SCENARIOS } from "./helpers/conformance.js";

/** Scenarios that @modelcontextprotocol/conformance@0.2.0-alpha.12 itself marks skipped. */
const SKIPPED_BY_SUITE = new Set(["tasks-status-notifications"]);

import { startDemo } from "./helpers/server.js";

/**
 * The official conformance suite's `tasks-*` scenarios against the demo on 127.0.0.1:0.
 * Every check must pass; a scenario the suite itself marks skipped is reported as skipped
 * by the suite (it counts neither as passed nor failed), and must stay that way: if the
 * suite starts running it, this test fails until the list below is updated.
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
    // The suite skips this scenario itself ("pending subscriptions/listen rewrite"): the test
    // checks that nothing in it ran or failed, and says so in its name; it counts nothing as
    // passed. Our own listen-stream tests cover notifications/tasks.
    const skippedBySuite = SKIPPED_BY_SUITE.has(scenario);
    const title = skippedBySuite
      ? `${scenario} (skipped by the suite itself, not passed)`
      : scenario;
    it(title, { timeout: 240_000 }, async () => {
      const run = await runScenario(server.url, scenario);
      runs.push(run);
      expect(run.summary, run.output).not.toBeNull();
      const failing = run.checks.filter((c) => c.status !== "SUCCESS" && c.status !== "SKIPPED");
      expect(failing, run.output).toEqual([]);
      expect(run.summary?.failed, run.output).toBe(0);
      expect(run.summary?.warnings, run.output).toBe(0);
      expect(run.exitCode, run.output).toBe(0);
      const skipped = run.checks.filter((c) => c.status === "SKIPPED");
      if (skippedBySuite) {
        // Nothing was checked, so nothing may be counted as passed.
        expect(skipped.length, run.output).toBeGreaterThan(0);
        expect(run.summary?.passed, run.output).toBe(0);
      } else {
        expect(skipped, run.output).toEqual([]);
        expect(run.checks.length).toBeGreaterThan(0);
        expect(run.summary?.passed).toBe(run.summary?.total);
      }
    });
  }
});
