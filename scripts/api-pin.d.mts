/** Pins the public API of the package whose `test/api.test.ts` calls it (vitest). */
export function describePublicApi(testFileUrl: string): void;
