import { describe, expect, it } from "vitest";
import { buildPlans } from "../src/plans/index.js";
import { notifyBatch } from "../src/plans/notify.js";
import { plan, type Statement } from "../src/plans/plan.js";
import { ENDED_COLUMNS, terminalSetsWhen } from "../src/plans/terminal-effects.js";

describe("statement plans", () => {
  it("number named parameters in the order listed and send the input's values in that order", () => {
    const p = plan<{ id: string; now: number | null }>(
      ["now", "id"],
      (x) => `SELECT ${x.id}::text, ${x.now}::float8`,
    );
    expect(p.text).toBe("SELECT $2::text, $1::float8");
    expect(p({ id: "a", now: null })).toEqual({ text: p.text, values: [null, "a"] });
  });

  it("refuse a parameter used but not listed, or listed twice, when they are made", () => {
    expect(() =>
      plan<{ id: string; now: number }>(["id"], (x) => `SELECT ${x.id}, ${x.now}`),
    ).toThrow("no parameter named now");
    expect(() => plan<{ id: string }>(["id", "id"], (x) => `SELECT ${x.id}`)).toThrow(
      "listed twice",
    );
  });

  /** Every `$n` in the text has a value and every value a `$n`: nothing sent unused. */
  const placeholdersMatch = (statement: Statement) => {
    const used = new Set([...statement.text.matchAll(/\$(\d+)\b/g)].map((m) => Number(m[1])));
    const sent = statement.values.map((_, i) => i + 1);
    expect([...used].sort((a, b) => a - b)).toEqual(sent);
  };

  for (const notify of [null, "mcp_tasks_public"]) {
    for (const bounded of [false, true]) {
      it(`use each value they send (notify ${notify ?? "after commit"}, bounds ${bounded})`, () => {
        const plans = buildPlans({
          table: '"public"."mcp_tasks"',
          usageTable: '"public"."mcp_task_usage"',
          notify: { channel: notify, origin: "abcdefgh" },
          bounds: bounded
            ? { maxTasks: 10, maxTasksPerOwner: 5, maxBytesPerOwner: 1000 }
            : { maxTasks: null, maxTasksPerOwner: null, maxBytesPerOwner: null },
          restartGraceMs: bounded ? 5000 : 0,
        });
        // Each plan with an empty input: its values are its parameters, all undefined.
        for (const [name, build] of Object.entries(plans)) {
          const statement = (build as (input: object) => Statement)({});
          expect(statement.text, name).not.toContain("undefined");
          placeholdersMatch(statement);
        }
        // The plans that pick one of two texts, both ways.
        const list = { ownerKey: "", after: 0, now: null, statuses: null, limit: 1 };
        const claim = {
          holder: "h",
          leaseMs: 1,
          now: null,
          limit: 1,
          maxRunningPerOwner: null,
          maxWaitingPerOwner: null,
          afterOwnerKey: null,
          afterToolName: null,
        };
        for (const withUnowned of [false, true]) {
          placeholdersMatch(plans.list({ ...list, withUnowned }));
          placeholdersMatch(plans.listNewest({ ...list, before: 0, tools: null, withUnowned }));
        }
        placeholdersMatch(plans.claim({ ...claim, tools: null }));
        placeholdersMatch(plans.claim({ ...claim, tools: "[]" }));
        placeholdersMatch(notifyBatch({ channel: "c", payloads: "[]" }));
      });
    }
  }

  it("write every one of core's terminal effects in each statement that ends a task", () => {
    const plans = buildPlans({
      table: "t",
      usageTable: "u",
      notify: { channel: null, origin: "abcdefgh" },
      bounds: { maxTasks: null, maxTasksPerOwner: null, maxBytesPerOwner: null },
      restartGraceMs: 0,
    });
    const ending = {
      settle: plans.settle({ now: null, outcomes: "[]" }).text,
      recoverOrphans: plans.recoverOrphans({ now: null, limit: 1 }).text,
      requeue: plans.requeue({} as never).text,
      releaseLease: plans.releaseLease({} as never).text,
    };
    expect(ENDED_COLUMNS.map(([column]) => column)).toEqual([
      "expires_at",
      "input_requests",
      "lease_holder",
      "lease_expires_at",
      "available_at",
    ]);
    for (const [name, text] of Object.entries(ending)) {
      for (const [column, value] of ENDED_COLUMNS) {
        // Unconditionally, or as the ending branch of a CASE.
        const written =
          text.includes(`${column} = ${value}`) ||
          new RegExp(`${column} = CASE WHEN .* THEN ${literalPattern(value)} ELSE`).test(text);
        expect(written, `${name} writes ${column}`).toBe(true);
      }
    }
  });

  it("refuse a conditional ending that does not name every ended column's other value", () => {
    const all = Object.fromEntries(ENDED_COLUMNS.map(([column]) => [column, `t.${column}`]));
    expect(terminalSetsWhen("c", all)).toContain("expires_at = CASE WHEN c THEN");
    const { available_at: _, ...missing } = all;
    expect(() => terminalSetsWhen("c", missing)).toThrow("missing: available_at");
    expect(() => terminalSetsWhen("c", { ...all, status: "x" })).toThrow("not ended: status");
  });
});

/** `text` as a regular expression matching itself. */
function literalPattern(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
