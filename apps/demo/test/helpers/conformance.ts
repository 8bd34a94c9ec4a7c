import { execFile } from "node:child_process";

/** The official suite, at the version with the tasks scenarios (needs Node 22 via npx). */
export const CONFORMANCE = "@modelcontextprotocol/conformance@0.2.0-alpha.12";

/** Every `tasks-*` server scenario of that version. */
export const TASK_SCENARIOS = [
  "tasks-lifecycle",
  "tasks-capability-negotiation",
  "tasks-wire-fields",
  "tasks-request-state-removal",
  "tasks-mrtr-input",
  "tasks-request-headers",
  "tasks-dispatch-and-envelope",
  "tasks-status-notifications",
  "tasks-required-task-error",
  "tasks-mrtr-composition",
] as const;

export interface CheckLine {
  id: string;
  status: string;
  text: string;
}

export interface ScenarioRun {
  scenario: string;
  exitCode: number | null;
  checks: CheckLine[];
  summary: { passed: number; total: number; failed: number; warnings: number } | null;
  output: string;
}

const ANSI = new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*m`, "g");
const CHECK = /^\S+\s+\[([^\]]+?)\s*\]\s+(SUCCESS|FAILURE|WARNING|SKIPPED|INFO)\s*(.*)$/;
const SUMMARY = /Passed:\s*(\d+)\/(\d+),\s*(\d+) failed,\s*(\d+) warnings/;

/** Parses the suite's console output into checks and its summary line. */
export function parseConformanceOutput(raw: string): Pick<ScenarioRun, "checks" | "summary"> {
  const text = raw.replace(ANSI, "");
  const checks: CheckLine[] = [];
  for (const line of text.split(/\r?\n/)) {
    const match = CHECK.exec(line.trim());
    if (match) checks.push({ id: match[1] ?? "", status: match[2] ?? "", text: match[3] ?? "" });
  }
  const s = SUMMARY.exec(text);
  return {
    checks,
    summary: s
      ? { passed: Number(s[1]), total: Number(s[2]), failed: Number(s[3]), warnings: Number(s[4]) }
      : null,
  };
}

/** Runs one scenario against `url` (bounded by `timeoutMs`). */
export function runScenario(
  url: string,
  scenario: string,
  timeoutMs = 180_000,
): Promise<ScenarioRun> {
  return new Promise((resolve) => {
    execFile(
      "npx",
      [
        "-y",
        "-p",
        "node@22",
        "-p",
        CONFORMANCE,
        "--",
        "conformance",
        "server",
        "--url",
        url,
        "--scenario",
        scenario,
      ],
      {
        timeout: timeoutMs,
        maxBuffer: 16 * 1024 * 1024,
        env: { ...process.env, NO_COLOR: "1", FORCE_COLOR: "0" },
      },
      (error, stdout, stderr) => {
        const output = `${stdout}\n${stderr}`;
        const exitCode = error ? (typeof error.code === "number" ? error.code : null) : 0;
        resolve({ scenario, exitCode, output, ...parseConformanceOutput(output) });
      },
    );
  });
}
