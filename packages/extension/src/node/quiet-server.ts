import { Server } from "@modelcontextprotocol/server";
import { bindTasksExtension, type CreateTasksServerOptions } from "../binding.js";
import { tasksServerCapabilities } from "../capabilities.js";

/**
 * A `Server` whose end of exchange builds no stack trace.
 *
 * `createMcpHandler` serves every SDK-routed request (`tools/call`, discovery, …) on a
 * fresh server that it closes once the answer is out; the SDK's close hook builds a
 * `ConnectionClosed` error for whatever is still pending — normally nothing — on every
 * close, capturing a stack each time. Here that one construction runs with
 * `Error.stackTraceLimit = 0`: the limit is restored before any close callback, response
 * handler or abort listener runs, so errors created by them (and everywhere else) keep
 * their stacks. The error itself is unchanged (class, code, message); only its `stack`
 * lists no frames.
 */
class QuietCloseServer extends Server {
  protected override _onclose(): void {
    const limit = Error.stackTraceLimit;
    const self = this as { onclose?: (() => void) | undefined };
    const onclose = self.onclose;
    // The base builds its error first, then calls `onclose`: restore the limit there.
    const restore = () => {
      Error.stackTraceLimit = limit;
      if (self.onclose === restore) self.onclose = onclose;
      onclose?.();
    };
    self.onclose = restore;
    Error.stackTraceLimit = 0;
    try {
      super._onclose();
    } finally {
      Error.stackTraceLimit = limit;
      if (self.onclose === restore) self.onclose = onclose;
    }
  }
}

/** `createTasksServer`, on a {@link QuietCloseServer}: the same registrations and answers. */
export function createQuietTasksServer(
  extension: Parameters<typeof bindTasksExtension>[1],
  options: CreateTasksServerOptions,
): Server {
  const server = new QuietCloseServer(
    options.serverInfo ?? { name: "mcp-tasks", version: "0.1.0" },
    {
      capabilities: { tools: {}, ...tasksServerCapabilities() },
      ...(options.instructions !== undefined && { instructions: options.instructions }),
    },
  );
  return bindTasksExtension(server, extension, options.owner);
}
