import { describe, expect, it } from "vitest";
import { ManualClock, OperatorView, owner, TaskService } from "../src/index.js";
import { ReferenceTaskStore } from "./support/reference-store.js";

const alice = owner({ principalId: "alice" });
const bob = owner({ principalId: "bob" });
const request = { toolName: "slow_compute", arguments: { seconds: 1 } };

function setup() {
  const store = new ReferenceTaskStore({ clock: new ManualClock() });
  return { store, service: new TaskService({ store }), view: new OperatorView({ store }) };
}

describe("owner scope that a facade cannot bypass", () => {
  it("keeps the store and the cross-owner reads off the service every facade holds", () => {
    const { service } = setup();
    expect("store" in service).toBe(false);
    expect((service as unknown as Record<string, unknown>).store).toBeUndefined();
    expect("listNewestAcrossOwners" in service).toBe(false);
    expect("getAcrossOwners" in service).toBe(false);
  });

  it("gives the operator view every owner's tasks, newest first, filtered and paged", async () => {
    const { service, view } = setup();
    const a = await service.create(alice, { era: "2026-07-28", request });
    const b = await service.create(bob, { era: "2026-07-28", request });
    const c = await service.create(bob, {
      era: "2026-07-28",
      request: { toolName: "other", arguments: {} },
    });
    expect((await view.listNewest()).tasks.map((t) => t.taskId)).toEqual([
      c.taskId,
      b.taskId,
      a.taskId,
    ]);
    expect((await view.listNewest({ toolNames: ["other"] })).tasks.map((t) => t.taskId)).toEqual([
      c.taskId,
    ]);
    const first = await view.listNewest({ limit: 2 });
    expect(first.tasks).toHaveLength(2);
    const rest = await view.listNewest({ limit: 2, cursor: first.nextCursor as string });
    expect(rest.tasks.map((t) => t.taskId)).toEqual([a.taskId]);
    expect((await view.get(b.taskId)).owner).toEqual(bob);
    await expect(service.get(alice, b.taskId)).rejects.toMatchObject({
      code: "not_found_or_unauthorized",
    });
    await expect(view.get("missing")).rejects.toMatchObject({ code: "not_found_or_unauthorized" });
  });
});
