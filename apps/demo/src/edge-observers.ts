import { ownerKey } from "@mcp-tasks/core/store";
import {
  isLimitKind,
  type LegacySessionEvent,
  LIMIT_REASONS,
  type Refusal,
  type RoutedRequest,
} from "@mcp-tasks/http";
import { clientLabel, type DemoMetrics, type LimitRefusalReason } from "./metrics.js";

function record(value: unknown): Record<string, unknown> | undefined {
  return typeof value === "object" && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}

/** `params._meta["io.modelcontextprotocol/clientInfo"].name` of a 2026-07-28 request. */
function modernClientName(body: unknown): string {
  const meta = record(record(record(body)?.params)?._meta);
  return clientLabel(record(meta?.["io.modelcontextprotocol/clientInfo"])?.name);
}

/** `params.clientInfo.name` when the body is a 2025-11-25 `initialize` request. */
function initializeClientName(body: unknown): string | undefined {
  const message = record(body);
  if (message?.method !== "initialize") return undefined;
  return clientLabel(record(record(message.params)?.clientInfo)?.name);
}

/**
 * The endpoint's hooks that feed the demo's metrics: each routed request counted by era and
 * client name (2025-11-25 sessions remember the name their `initialize` gave; each owner
 * adds a bounded number of names), and each per-owner limit refusal by reason.
 */
export function metricsObservers(metrics: DemoMetrics) {
  return {
    onRouted(request: RoutedRequest): void {
      const owner = ownerKey(request.owner);
      if (request.era === "modern") {
        metrics.count("2026-07-28", modernClientName(request.body), owner);
        return;
      }
      const name =
        initializeClientName(request.body) ?? metrics.sessionClient(request.sessionId ?? null);
      metrics.count("2025-11-25", name, owner);
    },
    onLegacySession(event: LegacySessionEvent): void {
      if (event.kind === "opened") {
        // The label its initialize was counted under (`other` past the owner's names).
        metrics.bindSession(
          event.sessionId,
          metrics.requests.labelOf(clientLabel(event.clientName)),
        );
      } else metrics.endSession(event.sessionId);
    },
    onRefused(refusal: Refusal): void {
      if (isLimitKind(refusal.kind)) {
        metrics.countLimitRefusal(LIMIT_REASONS[refusal.kind] as LimitRefusalReason);
      }
    },
  };
}
