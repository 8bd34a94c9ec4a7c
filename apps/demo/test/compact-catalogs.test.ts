// The test command's PostgreSQL preparation (scripts/postgres.mjs): the catalogs that the
// suites' fresh schemas churn are compacted before a run, so that on a server without
// autovacuum a run is not slowed down by the runs before it.
// `postgres`: the root's devDependency, which the script under test uses too.
import postgres from "postgres";
import { describe, expect, it } from "vitest";
import { compactCatalogs } from "../../../scripts/postgres.mjs";
import { DATABASE_URL } from "./helpers/process.js";

describe("compactCatalogs", () => {
  it("gives back the space dropped schemas left in a database's catalogs", async () => {
    // A database of its own: its catalogs change only here, whatever runs beside this test.
    const name = `compact_${process.pid}`;
    const url = new URL(DATABASE_URL);
    url.pathname = `/${name}`;
    const admin = postgres(DATABASE_URL, { max: 1, onnotice: () => {} });
    await admin.unsafe(`drop database if exists ${name}`);
    await admin.unsafe(`create database ${name}`);
    const sql = postgres(url.toString(), { max: 1, onnotice: () => {} });
    try {
      // Dead catalog rows, as a suite leaves them: schemas with a table each, dropped.
      const columns = Array.from({ length: 30 }, (_, c) => `c${c} int`).join(", ");
      for (let i = 0; i < 40; i++) {
        await sql.unsafe(`create schema s${i}; create table s${i}.t (${columns})`);
      }
      for (let i = 0; i < 40; i++) await sql.unsafe(`drop schema s${i} cascade`);
      const first = await compactCatalogs(url.toString());
      expect(first).not.toBeNull();
      expect(first?.after).toBeLessThan(first?.before as number);
      // Nothing dead was left: a second pass finds them as the first left them.
      const second = await compactCatalogs(url.toString());
      expect(second?.before).toBe(first?.after);
    } finally {
      await sql.end({ timeout: 5 });
      await admin.unsafe(`drop database if exists ${name}`);
      await admin.end({ timeout: 5 });
    }
  });

  it("answers null, without throwing, where no server answers", async () => {
    expect(await compactCatalogs("postgres://postgres@127.0.0.1:1/test")).toBeNull();
  });
});
