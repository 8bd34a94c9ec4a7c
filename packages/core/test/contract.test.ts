// The contract suite over the memory store, from source: a change to the state machine in
// this package fails here, before any store package is rebuilt.
import { MemoryTaskStore } from "@mcp-tasks/store-memory";
import { describeTaskStoreContract } from "../src/testing/index.js";

describeTaskStoreContract(
  "MemoryTaskStore (from source)",
  ({ clock, maxTasks, maxTasksPerOwner, maxPageSize }) =>
    new MemoryTaskStore({
      clock,
      maxPageSize,
      maxTasks: maxTasks ?? 1_000_000,
      maxTasksPerOwner: maxTasksPerOwner ?? 1_000_000,
      sweepIntervalMs: 0,
    }),
);
