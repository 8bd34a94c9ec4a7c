import type { JSONRPCMessage, Transport } from "@modelcontextprotocol/server";
import { afterEach, describe, expect, it } from "vitest";
import { createQuietTasksServer } from "../src/node/quiet-server.js";
import { ALICE, type Harness, harness } from "./fixtures.js";

/** The least transport the server connects to: closing it runs the server's close hook. */
function loopTransport(): Transport {
  const transport: Transport = {
    start: async () => {},
    send: async (_message: JSONRPCMessage) => {},
    close: async () => {
      transport.onclose?.();
    },
  };
  return transport;
}

describe("the SDK servers of the node handler", () => {
  let h: Harness;
  afterEach(async () => h.close());

  it("close without a stack trace for their own error, and leave the stack limit as it was", async () => {
    h = await harness();
    const server = createQuietTasksServer(h.ext, { owner: ALICE });
    const before = Error.stackTraceLimit;
    let seenInCallback: number | undefined;
    let calls = 0;
    server.onclose = () => {
      calls += 1;
      seenInCallback = Error.stackTraceLimit;
    };
    await server.connect(loopTransport());
    // A request still waiting for its answer gets the SDK's ConnectionClosed error.
    const pending = server.ping().then(
      () => undefined,
      (error: unknown) => error,
    );
    await server.close();
    const error = (await pending) as Error & { code?: unknown };
    expect(error).toBeInstanceOf(Error);
    expect(error.message).toMatch(/Connection closed/);
    expect(error.stack ?? "").not.toMatch(/\n\s+at /);
    expect(calls).toBe(1);
    // Callbacks (and errors they create) run with the usual limit.
    expect(seenInCallback).toBe(before);
    expect(Error.stackTraceLimit).toBe(before);
    expect(server.onclose).toBeTypeOf("function");
  });

  it("advertise the tasks extension and the tools like createTasksServer", async () => {
    h = await harness();
    const server = createQuietTasksServer(h.ext, { owner: ALICE });
    expect(server.getCapabilities()).toMatchObject({ tools: {} });
    expect(JSON.stringify(server.getCapabilities())).toContain("io.modelcontextprotocol/tasks");
  });
});
