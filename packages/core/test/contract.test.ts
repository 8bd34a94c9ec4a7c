// The contract suites over core's reference store (test/support), from source: a change to
// the state machine in this package fails here, before any store package is rebuilt, and
// the suites themselves are shown to pass on a plain, obviously correct implementation.
import { describeQueueStoreContract, describeTaskStoreContract } from "../src/testing/index.js";
import { ReferenceTaskStore } from "./support/reference-store.js";

describeTaskStoreContract(
  "ReferenceTaskStore (core's test store, from source)",
  ({ clock, maxTasks, maxTasksPerOwner, maxBytesPerOwner, maxPageSize }) =>
    new ReferenceTaskStore({
      clock,
      maxPageSize,
      ...(maxTasks !== undefined && { maxTasks }),
      ...(maxTasksPerOwner !== undefined && { maxTasksPerOwner }),
      ...(maxBytesPerOwner !== undefined && { maxBytesPerOwner }),
    }),
);

describeQueueStoreContract(
  "ReferenceTaskStore (core's test store, from source)",
  ({ clock }) => new ReferenceTaskStore({ clock }),
);
