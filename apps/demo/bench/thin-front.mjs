// The thinnest HTTP front a task-creating `tools/call` could have over a store, for the scale
// bench: a bare node:http server (as the HTTP bench's echo) that reads and parses the request,
// makes the call's create, answers with the task, and then makes its completion, as the
// demo's runner does after its answer. No MCP, no validation, no run, no metrics: what any
// server's `tools/call` costs at least on that store and this machine, so the demo's rate can
// be read against it as well as against the store's own create.
import { createServer } from "node:http";

/**
 * Starts the front on 127.0.0.1 (a free port). `create()` makes a call's task and resolves
 * with it; `complete(task)` makes its completion (the front does not wait for it to answer).
 * Resolves with `{ url, stop }`; `stop()` closes the server once the completions in flight
 * have settled, and rejects with the first completion that failed, if one did.
 */
export function startThinFront({ create, complete }) {
  const completing = new Set();
  let failed;
  const server = createServer((req, res) => {
    const chunks = [];
    req.on("data", (chunk) => chunks.push(chunk));
    req.on("end", async () => {
      let body;
      let task;
      try {
        const id = JSON.parse(Buffer.concat(chunks).toString("utf8")).id ?? null;
        task = await create();
        body = JSON.stringify({
          jsonrpc: "2.0",
          id,
          result: {
            resultType: "task",
            taskId: task.taskId,
            status: task.status,
            createdAt: new Date(task.createdAt).toISOString(),
            lastUpdatedAt: new Date(task.lastUpdatedAt).toISOString(),
            ttlMs: task.ttlMs,
            pollIntervalMs: 500,
          },
        });
      } catch (error) {
        res.writeHead(500).end(String(error));
        return;
      }
      res.writeHead(200, {
        "Content-Type": "application/json",
        "Content-Length": Buffer.byteLength(body),
      });
      res.end(body);
      const done = complete(task)
        .catch((error) => {
          failed ??= error;
        })
        .finally(() => completing.delete(done));
      completing.add(done);
    });
  });
  return new Promise((resolve) => {
    server.listen(0, "127.0.0.1", () => {
      resolve({
        url: `http://127.0.0.1:${server.address().port}/mcp`,
        stop: async () => {
          await Promise.all(completing);
          await new Promise((r) => server.close(() => r()));
          if (failed !== undefined) throw failed;
        },
      });
    });
  });
}
