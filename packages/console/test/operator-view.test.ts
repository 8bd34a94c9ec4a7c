import { owner, TaskService } from "@mcp-tasks/core";
import { MemoryTaskStore } from "@mcp-tasks/store-memory";
import { describe, expect, it } from "vitest";
import { createConsoleHandler } from "../src/index.js";

describe("the operators' cross-owner reads", () => {
  it("are not taken from the service: operator tokens without an OperatorView are refused", () => {
    const service = new TaskService({ store: new MemoryTaskStore({ sweepIntervalMs: 0 }) });
    const alice = owner({ principalId: "alice" });
    expect(() =>
      createConsoleHandler({ service, adminTokens: ["op"], resolveOwner: async () => alice }),
    ).toThrow(/operatorView/);
    // Without operator tokens nobody reads across owners, and none is needed.
    expect(() => createConsoleHandler({ service, resolveOwner: async () => alice })).not.toThrow();
  });
});
