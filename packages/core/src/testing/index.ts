/**
 * `@mcp-tasks/core/testing`: the task store contract suite, for vitest.
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
  describeLeasingStoreContract,
  type LeaseContractStoreFactory,
  type LeaseContractStoreOptions,
} from "./lease-contract.js";
