import { describe, expect, it } from "vitest";
import { ANONYMOUS, isAnonymous, owner, sameOwner } from "../src/index.js";
import { ownerKey, ownerScope, scopeAllows, UNOWNED_KEY } from "../src/store-api.js";

const alice = owner({ principalId: "alice", tenantId: "acme" });
const bob = owner({ principalId: "bob", tenantId: "acme" });

describe("owner keys", () => {
  it("are equal exactly when owners are equal", () => {
    const parts = [null, "", "a", "a|b", "~", "1:a", "b"];
    const owners = parts.flatMap((p) =>
      parts.flatMap((t) => parts.map((a) => owner({ principalId: p, tenantId: t, audience: a }))),
    );
    const keys = new Map<string, (typeof owners)[number]>();
    for (const o of owners) {
      const k = ownerKey(o);
      const seen = keys.get(k);
      if (seen) expect(sameOwner(seen, o)).toBe(true);
      keys.set(k, o);
    }
    expect(keys.size).toBe(parts.length ** 3);
  });

  it("the anonymous owner has the unowned key; an empty-string principal is not anonymous", () => {
    expect(ownerKey(ANONYMOUS)).toBe(UNOWNED_KEY);
    expect(isAnonymous(owner({ principalId: "" }))).toBe(false);
    expect(ownerKey(owner({ principalId: "" }))).not.toBe(UNOWNED_KEY);
  });
});

describe("policy table", () => {
  // [caller, task owner, requireOwner, visible]
  const rows: [string, typeof alice, typeof alice, boolean, boolean][] = [
    ["owner sees own task", alice, alice, false, true],
    ["owner sees own task under requireOwner", alice, alice, true, true],
    ["owner never sees another owner's task", bob, alice, false, false],
    ["anonymous never sees an owned task", ANONYMOUS, alice, false, false],
    ["owner sees unowned tasks by default", alice, ANONYMOUS, false, true],
    ["anonymous sees unowned tasks by default", ANONYMOUS, ANONYMOUS, false, true],
    ["owner does not see unowned tasks under requireOwner", alice, ANONYMOUS, true, false],
  ];
  for (const [title, caller, taskOwner, requireOwner, visible] of rows) {
    it(title, () => {
      const scope = ownerScope(caller, { requireOwner });
      expect(scope !== null && scopeAllows(scope, taskOwner)).toBe(visible);
    });
  }

  it("anonymous callers get no scope at all under requireOwner", () => {
    expect(ownerScope(ANONYMOUS, { requireOwner: true })).toBeNull();
  });
});
