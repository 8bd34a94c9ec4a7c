// W3C trace context as tasks store it: strict checks (a client's bad value is dropped, never
// an error), and the round trip between the stored strings and OpenTelemetry span contexts.
import { context, ROOT_CONTEXT, TraceFlags, trace } from "@opentelemetry/api";
import { describe, expect, it } from "vitest";
import {
  extractTraceContext,
  parseTraceparent,
  parseTracestate,
  remoteSpanContext,
  traceContextOf,
  withRemoteParent,
} from "../src/index.js";

const TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736";
const SPAN_ID = "00f067aa0ba902b7";
const VALID = `00-${TRACE_ID}-${SPAN_ID}-01`;

describe("parseTraceparent", () => {
  it("accepts a version-00 value as it is", () => {
    expect(parseTraceparent(VALID)).toBe(VALID);
    expect(parseTraceparent(`00-${TRACE_ID}-${SPAN_ID}-00`)).toBe(`00-${TRACE_ID}-${SPAN_ID}-00`);
  });

  it("reads a higher version as version 00 (its first four fields)", () => {
    expect(parseTraceparent(`01-${TRACE_ID}-${SPAN_ID}-01`)).toBe(VALID);
    expect(parseTraceparent(`cc-${TRACE_ID}-${SPAN_ID}-01-what-the-future-holds`)).toBe(VALID);
  });

  it.each([
    ["uppercase hex", `00-${TRACE_ID.toUpperCase()}-${SPAN_ID}-01`],
    ["version ff", `ff-${TRACE_ID}-${SPAN_ID}-01`],
    ["an all-zero trace id", `00-${"0".repeat(32)}-${SPAN_ID}-01`],
    ["an all-zero parent id", `00-${TRACE_ID}-${"0".repeat(16)}-01`],
    ["version 00 with a fifth field", `${VALID}-00`],
    ["a short trace id", `00-${TRACE_ID.slice(1)}-${SPAN_ID}-01`],
    ["a missing flags field", `00-${TRACE_ID}-${SPAN_ID}`],
    ["non-hex characters", `00-${TRACE_ID.slice(0, 31)}g-${SPAN_ID}-01`],
    ["surrounding spaces", ` ${VALID} `],
    ["a future version without a dash after the flags", `01-${TRACE_ID}-${SPAN_ID}-01x`],
    ["an empty string", ""],
    ["a huge string", `01-${TRACE_ID}-${SPAN_ID}-01-${"a".repeat(10_000)}`],
  ])("rejects %s", (_what, value) => {
    expect(parseTraceparent(value)).toBeNull();
  });

  it("rejects what is not a string", () => {
    for (const value of [undefined, null, 42, {}, [VALID]])
      expect(parseTraceparent(value)).toBeNull();
  });
});

describe("parseTracestate", () => {
  it("accepts simple and multi-tenant keys, trimming the list", () => {
    expect(parseTracestate("rojo=00f067aa0ba902b7,congo=t61rcWkgMzE")).toBe(
      "rojo=00f067aa0ba902b7,congo=t61rcWkgMzE",
    );
    expect(parseTracestate(" fw529a3039@dt=aGVsbG8 , ,vendor/x_y-z*=a b ")).toBe(
      "fw529a3039@dt=aGVsbG8 , ,vendor/x_y-z*=a b",
    );
  });

  it.each([
    ["an uppercase key", "Rojo=1"],
    ["a key starting with a digit (not multi-tenant)", "1abc=1"],
    ["a value with a comma-free '='", "rojo=a=b"],
    ["a control character in a value", "rojo=a\tb"],
    ["a member without '='", "rojo"],
    ["an empty key", "=1"],
    ["a duplicate key", "rojo=1,rojo=2"],
    ["a non-ASCII value", "rojo=é"],
    ["more than 32 members", Array.from({ length: 33 }, (_, i) => `k${i}=v`).join(",")],
    ["more than 512 characters", `rojo=${"a".repeat(250)},congo=${"b".repeat(260)}`],
    ["only empty members", " , "],
  ])("rejects %s", (_what, value) => {
    expect(parseTracestate(value)).toBeNull();
  });
});

describe("extractTraceContext", () => {
  it("reads traceparent and tracestate from a _meta object or header bag", () => {
    expect(extractTraceContext({ traceparent: VALID, tracestate: "rojo=1", other: true })).toEqual({
      traceparent: VALID,
      tracestate: "rojo=1",
    });
    expect(extractTraceContext({ traceparent: VALID })).toEqual({ traceparent: VALID });
  });

  it("drops a bad tracestate but keeps a good traceparent", () => {
    expect(extractTraceContext({ traceparent: VALID, tracestate: "BAD=1" })).toEqual({
      traceparent: VALID,
    });
    expect(extractTraceContext({ traceparent: VALID, tracestate: 7 })).toEqual({
      traceparent: VALID,
    });
  });

  it("is null without a valid traceparent, whatever else there is", () => {
    expect(extractTraceContext(undefined)).toBeNull();
    expect(extractTraceContext("traceparent")).toBeNull();
    expect(extractTraceContext({})).toBeNull();
    expect(extractTraceContext({ tracestate: "rojo=1" })).toBeNull();
    expect(extractTraceContext({ traceparent: "00-xyz" })).toBeNull();
  });
});

describe("span contexts", () => {
  it("turns a stored context into a remote parent and back", () => {
    const stored = { traceparent: VALID, tracestate: "rojo=1,congo=2" };
    const spanContext = remoteSpanContext(stored);
    expect(spanContext).toMatchObject({
      traceId: TRACE_ID,
      spanId: SPAN_ID,
      traceFlags: TraceFlags.SAMPLED,
      isRemote: true,
    });
    expect(spanContext.traceState?.get("congo")).toBe("2");
    const parent = trace.getSpanContext(withRemoteParent(stored, ROOT_CONTEXT));
    expect(parent?.spanId).toBe(SPAN_ID);
    expect(traceContextOf(trace.wrapSpanContext(spanContext))).toEqual(stored);
  });

  it("has nothing to store for a span without a valid context (no SDK, no parent)", () => {
    const span = trace.getTracer("test").startSpan("x", {}, ROOT_CONTEXT);
    expect(span.isRecording()).toBe(false);
    expect(traceContextOf(span)).toBeNull();
    span.end();
  });

  it("without an SDK, a span started under a stored context passes that context on", () => {
    const stored = { traceparent: `00-${TRACE_ID}-${SPAN_ID}-00` };
    const span = trace.getTracer("test").startSpan("x", {}, withRemoteParent(stored));
    expect(traceContextOf(span)).toEqual(stored);
    span.end();
    expect(withRemoteParent(null, ROOT_CONTEXT)).toBe(ROOT_CONTEXT);
    expect(withRemoteParent(undefined)).toBe(context.active());
  });
});
