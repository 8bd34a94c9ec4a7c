import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import {
  defaultResource,
  detectResources,
  envDetector,
  resourceFromAttributes,
} from "@opentelemetry/resources";
import {
  BatchSpanProcessor,
  ConsoleSpanExporter,
  NodeTracerProvider,
  SimpleSpanProcessor,
  type SpanExporter,
  type SpanProcessor,
} from "@opentelemetry/sdk-trace-node";

/** Where the demo's traces go: nowhere (the libraries' spans stay no-ops), stdout, or OTLP. */
export type OtelMode = "off" | "console" | "otlp";

/** The tracing the demo installed, to describe and to flush on shutdown. */
export interface DemoTracing {
  readonly mode: OtelMode;
  /** A line for the start-up output, or `null` when tracing is off. */
  readonly startupLine: string | null;
  /** Exports what is buffered and uninstalls the provider. */
  shutdown(): Promise<void>;
}

/** Settings of {@link startTracing}. */
export interface TracingOptions {
  /** `OTEL_SERVICE_NAME`, `OTEL_RESOURCE_ATTRIBUTES`, `OTEL_EXPORTER_OTLP_*` are read here. */
  readonly env?: NodeJS.ProcessEnv;
  /**
   * Export to this exporter instead of the mode's own, span by span (tests hand in the SDK's
   * `InMemorySpanExporter`).
   */
  readonly exporter?: SpanExporter;
}

const OFF: DemoTracing = {
  mode: "off",
  startupLine: null,
  shutdown: () => Promise.resolve(),
};

/**
 * Installs an OpenTelemetry SDK as the global tracer provider (with the W3C trace-context
 * propagator and async-hooks context), so the spans of `@mcp-tasks/*` — which depend on
 * `@opentelemetry/api` only — are recorded: `console` prints each span as it ends, `otlp`
 * sends batches over OTLP/HTTP to `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` or
 * `OTEL_EXPORTER_OTLP_ENDPOINT` (+ `/v1/traces`; default `http://localhost:4318`). `off`
 * installs nothing.
 */
export function startTracing(mode: OtelMode, options: TracingOptions = {}): DemoTracing {
  if (mode === "off" && options.exporter === undefined) return OFF;
  const env = options.env ?? process.env;
  const processor = spanProcessor(mode, env, options.exporter);
  const provider = new NodeTracerProvider({
    resource: defaultResource()
      .merge(resourceFromAttributes({ "service.name": "mcp-tasks-demo" }))
      // OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES win over the demo's defaults.
      .merge(detectResources({ detectors: [envDetector] })),
    spanProcessors: [processor],
  });
  provider.register();
  return {
    mode,
    startupLine: options.exporter ? null : `tracing: ${describe(mode, env)}`,
    shutdown: () => provider.shutdown(),
  };
}

function spanProcessor(
  mode: OtelMode,
  env: NodeJS.ProcessEnv,
  exporter: SpanExporter | undefined,
): SpanProcessor {
  if (exporter !== undefined) return new SimpleSpanProcessor(exporter);
  if (mode === "console") return new SimpleSpanProcessor(new ConsoleSpanExporter());
  // The exporter reads OTEL_EXPORTER_OTLP_(TRACES_)ENDPOINT, _HEADERS and _TIMEOUT itself.
  const url = otlpTracesUrl(env);
  return new BatchSpanProcessor(new OTLPTraceExporter(url === undefined ? {} : { url }));
}

/**
 * The traces URL from `env`, when it is not the process environment the exporter reads by
 * itself: `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` as is, or `OTEL_EXPORTER_OTLP_ENDPOINT` +
 * `/v1/traces`, as the OTLP exporter specification says.
 */
export function otlpTracesUrl(env: NodeJS.ProcessEnv): string | undefined {
  const traces = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim();
  if (traces) return traces;
  const base = env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim();
  if (base) return `${base.replace(/\/+$/, "")}/v1/traces`;
  return undefined;
}

function describe(mode: OtelMode, env: NodeJS.ProcessEnv): string {
  if (mode === "console") return "console (each span printed as it ends)";
  return `otlp ${otlpTracesUrl(env) ?? "http://localhost:4318/v1/traces"}`;
}
