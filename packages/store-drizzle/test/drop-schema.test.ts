import postgres from "postgres";
import { describe, expect, it } from "vitest";
import { dropTaskSchema, migrate } from "../src/index.js";
import { DATABASE_URL, freshSchemaName } from "./helpers.js";

async function schemaExists(name: string): Promise<boolean> {
  const sql = postgres(DATABASE_URL, { max: 1, onnotice: () => {} });
  try {
    const rows = await sql`SELECT 1 FROM pg_namespace WHERE nspname = ${name}`;
    return rows.length === 1;
  } finally {
    await sql.end({ timeout: 5 });
  }
}

describe("dropTaskSchema", () => {
  it("removes a schema made by migrate, and accepts one that is already gone", async () => {
    const schema = freshSchemaName("drop");
    await migrate(DATABASE_URL, { schema });
    expect(await schemaExists(schema)).toBe(true);
    await dropTaskSchema(DATABASE_URL, schema);
    expect(await schemaExists(schema)).toBe(false);
    await dropTaskSchema(DATABASE_URL, schema);
  });

  it("refuses the public schema and malformed names", async () => {
    await expect(dropTaskSchema(DATABASE_URL, "public")).rejects.toThrow(/public/);
    await expect(dropTaskSchema(DATABASE_URL, 'x"; DROP TABLE y; --')).rejects.toThrow();
    expect(await schemaExists("public")).toBe(true);
  });
});
