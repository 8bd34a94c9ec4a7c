/**
 * `@mcp-tasks/core/testing`: the task store contract suites, for vitest.
 *
 * @packageDocumentation
 */
export {
  type ContractStoreFactory,
  type ContractStoreOptions,
  type ContractSuiteOptions,
  describeTaskStoreContract,
} from "./contract.js";
export {
  describeQueueStoreContract,
  type QueueContractStoreFactory,
  type QueueContractStoreOptions,
} from "./queue-contract.js";
