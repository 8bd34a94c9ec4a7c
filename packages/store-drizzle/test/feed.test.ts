import { owner, type TaskChange } from "@mcp-tasks/core";
import { type OwnerScope, ownerScope } from "@mcp-tasks/core/store";
import postgres from "postgres";
import { describe, expect, it } from "vitest";
import { packChanges, payloadPrefix, unpackChanges } from "../src/feed.js";
import { createPostgresTaskStore } from "../src/index.js";
import { channelName } from "../src/names.js";
import { DATABASE_URL, dropSchemas, freshSchemaName, migrateSchema, sleep } from "./helpers.js";

const SCOPE = ownerScope(owner({ principalId: "alice" }), { requireOwner: false }) as OwnerScope;

/** Ids that break naive encodings: separators, quotes, escapes, astral characters, max length. */
const AWKWARD_IDS = [
  "plain",
  "a,b,c",
  'quote"d',
  "back\\slash",
  "new\nline",
  "tab\tand\u0001control",
  "[bracket]",
  "emoji-😀-end",
  "é".repeat(128),
  "😀".repeat(64), // 128 UTF-16 units, 256 bytes
];

const change = (taskId: string, version: number): TaskChange => ({
  taskId,
  kind: "status_message",
  status: "working",
  version,
});

describe("packed notifications (encoding)", () => {
  it("round-trip any task id, in order, with the origin", () => {
    const changes = AWKWARD_IDS.map((id, i) => change(id, i + 1));
    const payloads = packChanges("abc12345", changes);
    expect(payloads).toHaveLength(1);
    expect(payloads[0]!.startsWith("[")).toBe(true);
    expect(payloads[0]!.startsWith(payloadPrefix("abc12345"))).toBe(true);
    expect(unpackChanges(payloads[0]!)).toEqual({ origin: "abc12345", changes });
  });

  it("split a large batch into payloads PostgreSQL accepts, losing and reordering nothing", () => {
    const changes = Array.from({ length: 500 }, (_, i) => change(`${"😀".repeat(60)}-${i}`, i));
    const payloads = packChanges("abc12345", changes);
    expect(payloads.length).toBeGreaterThan(1);
    for (const p of payloads) expect(Buffer.byteLength(p)).toBeLessThan(8000);
    expect(payloads.flatMap((p) => unpackChanges(p).changes)).toEqual(changes);
  });

  it("carry the tool names of queued changes, awkward ones too, in a last item", () => {
    const changes: TaskChange[] = AWKWARD_IDS.map((id, i) =>
      i % 2 === 0
        ? { taskId: id, kind: "queued", status: "working", version: i + 1, toolName: id }
        : change(id, i + 1),
    );
    const [payload, ...more] = packChanges("abc12345", changes);
    expect(more).toEqual([]);
    expect(unpackChanges(payload!)).toEqual({ origin: "abc12345", changes });
    // The last item: one name a change, null for those without.
    expect(JSON.parse(payload!).at(-1)).toEqual(
      AWKWARD_IDS.map((id, i) => (i % 2 === 0 ? id : null)),
    );
    // A batch without tool names has no such item, as before.
    const plain = packChanges("abc12345", [change("a", 1)]);
    expect(plain).toEqual(['["abc12345", "status_message", "working", 1, "a"]']);
  });

  it("are understood across versions: an earlier node reads the changes of a payload with tool names, and a payload without them gives changes without", () => {
    const queued: TaskChange = {
      taskId: "t1",
      kind: "queued",
      status: "working",
      version: 1,
      toolName: "job",
    };
    const [payload] = packChanges("o", [queued, change("t2", 2)]);
    // The earlier reader: four items a change, from the second on.
    const items = JSON.parse(payload!) as unknown[];
    const earlier: unknown[][] = [];
    for (let i = 1; i + 3 < items.length; i += 4) earlier.push(items.slice(i, i + 4));
    expect(earlier).toEqual([
      ["queued", "working", 1, "t1"],
      ["status_message", "working", 2, "t2"],
    ]);
    // An earlier node's payload (or an in-transaction one): no tool names.
    expect(unpackChanges('["o", "queued", "working", 1, "t1"]').changes).toEqual([
      { taskId: "t1", kind: "queued", status: "working", version: 1 },
    ]);
  });

  it("split a large batch with tool names into payloads PostgreSQL accepts", () => {
    const changes: TaskChange[] = Array.from({ length: 300 }, (_, i) => ({
      taskId: `${"😀".repeat(30)}-${i}`,
      kind: "queued",
      status: "working",
      version: i,
      toolName: `${"é".repeat(40)}-${i}`,
    }));
    const payloads = packChanges("abc12345", changes);
    expect(payloads.length).toBeGreaterThan(1);
    for (const p of payloads) expect(Buffer.byteLength(p)).toBeLessThan(8000);
    expect(payloads.flatMap((p) => unpackChanges(p).changes)).toEqual(changes);
  });

  it("give nothing for malformed payloads and skip malformed entries", () => {
    expect(unpackChanges("[not json").changes).toEqual([]);
    expect(unpackChanges("[]").changes).toEqual([]);
    expect(unpackChanges('{"a":1}').changes).toEqual([]);
    expect(unpackChanges("[1,2,3]").changes).toEqual([]);
    const mixed = unpackChanges(
      '["o","created","working",1,"ok",7,"working",2,"bad-kind","created","working",1.5,"bad-version","created","working",3,""]',
    );
    expect(mixed.changes).toEqual([
      { taskId: "ok", kind: "created", status: "working", version: 1 },
    ]);
    expect(packChanges("o", [])).toEqual([]);
  });
});

describe.each(["after-commit", "in-transaction"] as const)(
  "notifications on PostgreSQL (%s)",
  (notify) => {
    it("another node hears a burst of awkward ids in order; the writer hears its own once; garbage is ignored", async () => {
      const schema = freshSchemaName("f");
      await migrateSchema(schema);
      const a = await createPostgresTaskStore({ url: DATABASE_URL, schema, poolSize: 4, notify });
      const b = await createPostgresTaskStore({ url: DATABASE_URL, schema, poolSize: 2, notify });
      const raw = postgres(DATABASE_URL, { max: 1, onnotice: () => {} });
      try {
        const onA: TaskChange[] = [];
        const onB: TaskChange[] = [];
        const stopA = a.watch((c) => onA.push(c));
        const stopB = b.watch((c) => onB.push(c));
        // Garbage on the channel first: B must ignore it and go on hearing real changes.
        for (const junk of ["[", "[1,2]", "nonsense", '["x","created"]', ",,,,"]) {
          await raw`SELECT pg_notify(${channelName(schema)}, ${junk})`;
        }
        const ids = AWKWARD_IDS.flatMap((id) =>
          Array.from({ length: 30 }, (_, i) => `${id.slice(0, 120)}#${i}`),
        );
        await Promise.all(
          ids.map((taskId) =>
            a.create(
              {
                taskId,
                era: "2026-07-28",
                request: { toolName: "t", arguments: {} },
                ttlMs: 60_000,
                ttlAnchor: "creation",
                pollIntervalMs: null,
              },
              SCOPE,
            ),
          ),
        );
        // Each create is two changes: created, then queued (no worker holds the task yet).
        for (let i = 0; i < 200 && onB.length < 2 * ids.length; i++) await sleep(25);
        // A's own notifications travelled too; give them time to come back before counting.
        await sleep(100);
        stopA();
        stopB();
        const of = (kind: string, events: TaskChange[]) =>
          events.filter((e) => e.kind === kind).map((e) => e.taskId);
        const created = (events: TaskChange[]) => of("created", events);
        for (const events of [onA, onB]) {
          expect(created(events).sort()).toEqual([...ids].sort());
          expect(of("queued", events).sort()).toEqual([...ids].sort());
          expect(events).toHaveLength(2 * ids.length);
          // A task's queued change never arrives before its created change.
          const firstSeen = new Map<string, string>();
          for (const e of events) if (!firstSeen.has(e.taskId)) firstSeen.set(e.taskId, e.kind);
          expect([...firstSeen.values()].every((kind) => kind === "created")).toBe(true);
        }
        // After-commit batches carry the writer's changes in the order it announced them. In
        // transaction, each notification leaves at its commit, and concurrent commits may
        // finish in another order than their statements returned.
        if (notify === "after-commit") expect(created(onB)).toEqual(created(onA));
        // The queued changes name the tool, for the writer and for another node, in both
        // modes (in transaction, the payload PostgreSQL builds ends with the tool names).
        const tools = (events: TaskChange[]) => [
          ...new Set(events.map((e) => `${e.kind} ${e.toolName}`)),
        ];
        expect(tools(onA).sort()).toEqual(["created undefined", "queued t"]);
        expect(tools(onB).sort()).toEqual(["created undefined", "queued t"]);
      } finally {
        await raw.end({ timeout: 5 });
        await a.close();
        await b.close();
        await dropSchemas([schema]);
      }
    });
  },
);
