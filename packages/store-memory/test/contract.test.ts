import { describeQueueStoreContract, describeTaskStoreContract } from "@mcp-tasks/core/testing";
import { MemoryTaskStore } from "../src/index.js";

describeTaskStoreContract(
  "MemoryTaskStore",
  ({ clock, maxTasks, maxTasksPerOwner, maxBytesPerOwner, maxPageSize }) =>
    new MemoryTaskStore({
      clock,
      maxPageSize,
      maxTasks: maxTasks ?? 1_000_000,
      maxTasksPerOwner: maxTasksPerOwner ?? 1_000_000,
      maxBytesPerOwner: maxBytesPerOwner ?? Number.POSITIVE_INFINITY,
      sweepIntervalMs: 0,
    }),
  { auditUsage: (store) => (store as MemoryTaskStore).auditUsage() },
);

describeQueueStoreContract(
  "MemoryTaskStore",
  ({ clock }) =>
    new MemoryTaskStore({
      clock,
      maxTasks: 1_000_000,
      maxTasksPerOwner: 1_000_000,
      maxBytesPerOwner: Number.POSITIVE_INFINITY,
      sweepIntervalMs: 0,
    }),
);
