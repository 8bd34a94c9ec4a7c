// `@mcp-tasks/store-drizzle/testing`: a store in a schema of its own, gone after dispose.
import { owner, TaskService } from "@mcp-tasks/core";
import postgres from "postgres";
import { afterAll, describe, expect, it } from "vitest";
import { openScratchTaskStore } from "../src/testing.js";
import { DATABASE_URL } from "./helpers.js";

const admin = postgres(DATABASE_URL, { max: 1, onnotice: () => {} });
afterAll(() => admin.end({ timeout: 5 }));

async function schemaExists(name: string): Promise<boolean> {
  const rows = await admin`select 1 from information_schema.schemata where schema_name = ${name}`;
  return rows.length === 1;
}

const ALICE = owner({ principalId: "alice" });
const request = { toolName: "echo", arguments: {} };

describe("openScratchTaskStore", () => {
  it("gives each caller a migrated schema of its own, and dispose drops it", async () => {
    const a = await openScratchTaskStore({ url: DATABASE_URL, prefix: "scratch_t", poolSize: 2 });
    const b = await openScratchTaskStore({ url: DATABASE_URL, prefix: "scratch_t", poolSize: 2 });
    try {
      expect(a.schema).toMatch(/^scratch_t_\d+_[0-9a-f]{10}$/);
      expect(a.schema).not.toBe(b.schema);
      const created = await new TaskService({ store: a.store }).create(ALICE, {
        era: "2026-07-28",
        request,
      });
      expect((await new TaskService({ store: a.store }).get(ALICE, created.taskId)).taskId).toBe(
        created.taskId,
      );
      await expect(new TaskService({ store: b.store }).get(ALICE, created.taskId)).rejects.toThrow(
        /not found/,
      );
      expect(await schemaExists(a.schema)).toBe(true);
    } finally {
      await a.dispose();
      await b.dispose();
    }
    expect(await schemaExists(a.schema)).toBe(false);
    expect(await schemaExists(b.schema)).toBe(false);
    await a.dispose(); // twice is fine
  });

  it("refuses a prefix that cannot name a schema", async () => {
    await expect(openScratchTaskStore({ url: DATABASE_URL, prefix: "Bad-Name" })).rejects.toThrow(
      /schema must be a lower-case SQL identifier/,
    );
  });
});
