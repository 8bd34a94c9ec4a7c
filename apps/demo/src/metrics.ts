import type { RunnerStats } from "@mcp-tasks/core";
/** The protocol eras the demo tells apart. */
export type Era = "2026-07-28" | "2025-11-25";

/** Longest client name kept as a label value; longer ones are cut. */
const MAX_NAME = 128;

/** Escapes a Prometheus label value (backslash, double quote, line feed). */
export function escapeLabelValue(value: string): string {
  return value.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n");
}

/** A client name as a label value: trimmed, bounded, `unknown` when absent. */
export function clientLabel(name: unknown): string {
  if (typeof name !== "string") return "unknown";
  const trimmed = name.trim();
  if (trimmed.length === 0) return "unknown";
  return trimmed.length > MAX_NAME ? trimmed.slice(0, MAX_NAME) : trimmed;
}

/**
 * Request counters per era and client name, plus the 2025-11-25 session → client name map
 * (a legacy client names itself only in `initialize`). Both are bounded: past `maxClients`
 * distinct names new ones count as `other`, past `maxSessions` the oldest session is
 * forgotten (its later requests count as `unknown`).
 */
export class RequestMetrics {
  readonly #counts = new Map<string, number>();
  readonly #sessions = new Map<string, string>();
  readonly #clientNames = new Set<string>();
  readonly #maxClients: number;
  readonly #maxSessions: number;

  constructor(options: { maxClients?: number; maxSessions?: number } = {}) {
    this.#maxClients = options.maxClients ?? 1000;
    this.#maxSessions = options.maxSessions ?? 10_000;
  }

  /** Counts one request of `era` from client `name` (already a label value). */
  count(era: Era, name: string): void {
    let client = name;
    if (!this.#clientNames.has(client)) {
      if (this.#clientNames.size >= this.#maxClients) client = "other";
      else this.#clientNames.add(client);
    }
    const key = `${era}\u0000${client}`;
    this.#counts.set(key, (this.#counts.get(key) ?? 0) + 1);
  }

  /** Remembers which client a 2025-11-25 session belongs to. */
  bindSession(sessionId: string, name: string): void {
    if (this.#sessions.size >= this.#maxSessions && !this.#sessions.has(sessionId)) {
      const oldest = this.#sessions.keys().next();
      if (!oldest.done) this.#sessions.delete(oldest.value);
    }
    this.#sessions.set(sessionId, name);
  }

  /** The client name of a 2025-11-25 session, or `unknown`. */
  sessionClient(sessionId: string | null): string {
    return (sessionId !== null && this.#sessions.get(sessionId)) || "unknown";
  }

  /** Forgets a closed session. */
  endSession(sessionId: string): void {
    this.#sessions.delete(sessionId);
  }

  /** The counter value (for tests). */
  get(era: Era, name: string): number {
    return this.#counts.get(`${era}\u0000${name}`) ?? 0;
  }

  /** Prometheus text exposition format 0.0.4. */
  render(gauges: { legacySessions?: number; runner?: RunnerStats } = {}): string {
    const lines = [
      "# HELP mcp_requests_total MCP HTTP requests served, by protocol era and client name.",
      "# TYPE mcp_requests_total counter",
    ];
    const rows = [...this.#counts].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    for (const [key, value] of rows) {
      const [era, client] = key.split("\u0000") as [string, string];
      lines.push(
        `mcp_requests_total{era="${escapeLabelValue(era)}",client="${escapeLabelValue(client)}"} ${value}`,
      );
    }
    if (gauges.legacySessions !== undefined) {
      lines.push(
        "# HELP mcp_legacy_sessions Open 2025-11-25 sessions on this node.",
        "# TYPE mcp_legacy_sessions gauge",
        `mcp_legacy_sessions ${gauges.legacySessions}`,
      );
    }
    const runner = gauges.runner;
    if (runner !== undefined) {
      lines.push(
        "# HELP mcp_tasks_claims_total Tasks this node claimed from the queue.",
        "# TYPE mcp_tasks_claims_total counter",
        `mcp_tasks_claims_total ${runner.claimed}`,
        "# HELP mcp_tasks_runs_started_total Task runs started on this node.",
        "# TYPE mcp_tasks_runs_started_total counter",
        `mcp_tasks_runs_started_total ${runner.started}`,
        "# HELP mcp_tasks_runs_superseded_total Runs stopped because another node took the task over.",
        "# TYPE mcp_tasks_runs_superseded_total counter",
        `mcp_tasks_runs_superseded_total ${runner.superseded}`,
        "# HELP mcp_tasks_runs_handed_back_total Runs handed back to the queue on shutdown.",
        "# TYPE mcp_tasks_runs_handed_back_total counter",
        `mcp_tasks_runs_handed_back_total ${runner.handedBack}`,
        "# HELP mcp_tasks_runs_running Task handlers running on this node now.",
        "# TYPE mcp_tasks_runs_running gauge",
        `mcp_tasks_runs_running ${runner.running}`,
      );
    }
    return `${lines.join("\n")}\n`;
  }
}
