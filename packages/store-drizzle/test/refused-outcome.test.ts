// An outcome no store keeps (U+0000 in a string: core's one rule, which PostgreSQL's jsonb
// imposes) fails the task with a message saying so, on both PostgreSQL and PGlite, instead of
// leaving it running until its lease runs out; the database's own words never show.
import { PGlite } from "@electric-sql/pglite";
import { isTerminal, owner, TaskRunner, TaskService, type ToolDefinition } from "@mcp-tasks/core";
import { afterAll, describe, expect, it } from "vitest";
import {
  createPGliteTaskStore,
  createPostgresTaskStore,
  type DrizzleTaskStore,
} from "../src/index.js";
import { DATABASE_URL, dropSchemas, freshSchemaName, migrateSchema } from "./helpers.js";

const alice = owner({ principalId: "alice" });
const schemas: string[] = [];
const db = new PGlite();
afterAll(async () => {
  await dropSchemas(schemas);
  await db.close();
});

const backends: [string, () => Promise<DrizzleTaskStore>][] = [
  [
    "PostgreSQL",
    async () => {
      const schema = freshSchemaName("refused");
      schemas.push(schema);
      await migrateSchema(schema);
      return createPostgresTaskStore({ url: DATABASE_URL, schema, poolSize: 2 });
    },
  ],
  [
    "PGlite",
    () => createPGliteTaskStore({ client: db, schema: freshSchemaName("refused"), migrate: true }),
  ],
];

const NUL = "\u0000";
const tools: ToolDefinition[] = [
  {
    name: "returns_nul",
    inputSchema: { type: "object" },
    taskMode: "always",
    run: async () => ({ content: [{ type: "text", text: `a${NUL}b` }] }),
  },
  {
    name: "throws_nul",
    inputSchema: { type: "object" },
    taskMode: "always",
    run: async () => {
      throw new Error(`bad${NUL}byte`);
    },
  },
];

for (const [name, open] of backends) {
  describe(`an outcome the database refuses (${name})`, () => {
    it("fails the task, saying the result or the error could not be stored", async () => {
      const store = await open();
      const service = new TaskService({ store, waitRecheckMs: 50 });
      const errors: unknown[] = [];
      const runner = new TaskRunner({ service, tools, onError: (e) => errors.push(e) });
      try {
        for (const [tool, what] of [
          ["returns_nul", "result"],
          ["throws_nul", "error"],
        ] as const) {
          const task = await runner.start(alice, {
            era: "2026-07-28",
            request: { toolName: tool, arguments: {} },
          });
          await runner.settled(task.taskId);
          const done = await service.waitFor(alice, task.taskId, (t) => isTerminal(t.status));
          expect(done.status).toBe("failed");
          expect(done.outcome).toEqual({
            kind: "error",
            error: {
              code: -32603,
              message: expect.stringMatching(
                new RegExp(
                  `^The tool's ${what} could not be stored: Invalid task: the ${what} holds the character U\\+0000 at /`,
                ),
              ),
            },
          });
          expect(done.execution.holder).toBeNull();
        }
        expect(errors).toEqual([]);
      } finally {
        await runner.shutdown({ drainMs: 1000 });
        await store.close();
      }
    });
  });
}
