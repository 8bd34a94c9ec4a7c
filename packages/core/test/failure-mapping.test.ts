// failureMapping: the one failure-to-wire policy both era facades use over their code tables.
import { describe, expect, it } from "vitest";
import { failureMapping, RpcError, type TaskErrorCode } from "../src/index.js";
import { taskErrors } from "../src/store-api.js";

const CODES: Record<TaskErrorCode, number> = {
  not_found_or_unauthorized: -32602,
  invalid_task: -32602,
  ttl_out_of_range: -32602,
  invalid_cursor: -32602,
  invalid_transition: -32602,
  already_exists: -32603,
  store_full: -32603,
  store_unavailable: -32603,
  lease_lost: -32603,
};

function mapping() {
  const reported: unknown[] = [];
  const { codeOf, failure, toolFailure } = failureMapping(CODES);
  return {
    codeOf,
    reported,
    failure: (e: unknown) => failure(e, (x) => reported.push(x)),
    toolFailure: (e: unknown) => toolFailure(e, (x) => reported.push(x)),
  };
}

describe("failureMapping", () => {
  it("answers an RpcError as it is, and a client's task error with the era's code", () => {
    const m = mapping();
    expect(m.failure(new RpcError(-32020, "Header mismatch", { x: 1 }))).toEqual({
      code: -32020,
      message: "Header mismatch",
      data: { x: 1 },
    });
    expect(m.failure(taskErrors.notFound("t1"))).toEqual({
      code: -32602,
      message: "Task t1 not found",
    });
    expect(m.codeOf("invalid_cursor")).toBe(-32602);
    expect(m.reported).toEqual([]);
  });

  it("hides store_unavailable's detail from the client and reports it", () => {
    const m = mapping();
    const error = taskErrors.storeUnavailable("connect ECONNREFUSED 127.0.0.1:5432");
    const wire = m.failure(error);
    expect(wire.code).toBe(-32603);
    expect(JSON.stringify(wire)).not.toContain("127.0.0.1");
    expect(wire.data).toMatchObject({ reason: "store_unavailable" });
    expect(m.reported).toEqual([error]);
  });

  it("names the quota of store_full without reporting it (a client's condition)", () => {
    const m = mapping();
    const wire = m.failure(taskErrors.storeFull("maxTasksPerOwner", 10));
    expect(wire).toMatchObject({
      code: -32603,
      data: { reason: "store_full", quota: "maxTasksPerOwner", limit: 10 },
    });
    expect(wire.message).toContain("maxTasksPerOwner");
    expect(m.reported).toEqual([]);
  });

  it("answers anything unexpected with a bare Internal error and reports it in full", () => {
    const m = mapping();
    const bug = new TypeError("cannot read x of undefined at /srv/app.js:1");
    expect(m.failure(bug)).toEqual({ code: -32603, message: "Internal error" });
    expect(m.reported).toEqual([bug]);
  });

  it("keeps a tool's own JSON-RPC error, and maps ours as failure does", () => {
    const m = mapping();
    expect(m.toolFailure(Object.assign(new Error("nope"), { code: -32050 }))).toEqual({
      code: -32050,
      message: "nope",
    });
    expect(m.toolFailure(taskErrors.notFound("t2"))).toEqual({
      code: -32602,
      message: "Task t2 not found",
    });
  });
});
