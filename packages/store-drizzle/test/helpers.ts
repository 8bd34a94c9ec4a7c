import { randomBytes } from "node:crypto";
import postgres from "postgres";

/** The test database; override with DATABASE_URL. */
export const DATABASE_URL = process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";

/** A schema name no other run uses. */
export function freshSchemaName(prefix = "t"): string {
  return `${prefix}_${process.pid}_${randomBytes(5).toString("hex")}`;
}

/** Drops test schemas (best effort, bounded). */
export async function dropSchemas(schemas: Iterable<string>): Promise<void> {
  const names = [...schemas];
  if (names.length === 0) return;
  const sql = postgres(DATABASE_URL, { max: 1, onnotice: () => {}, connect_timeout: 5 });
  try {
    for (const name of names) await sql.unsafe(`DROP SCHEMA IF EXISTS "${name}" CASCADE`);
  } finally {
    await sql.end({ timeout: 5 });
  }
}

/** Resolves after `ms`. */
export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
