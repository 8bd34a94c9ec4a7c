// The API snapshot test every published package runs (its test/api.test.ts calls this):
// the public surface of every entry in package.json "exports", read from the built `.d.ts`
// (turbo builds before it tests) by api-surface.mjs, must match the text pinned in
// test/__snapshots__/<entry>.api.txt, and each entry's runtime exports must be exactly the
// values it declares. After a deliberate API change, run `npx vitest run test/api.test.ts -u`
// in the package and review the snapshot diff with the change (and its changeset).
import { fileURLToPath, pathToFileURL } from "node:url";
import { beforeAll, describe, expect, it } from "vitest";
import { packageEntries, readApi } from "./api-surface.mjs";

export function describePublicApi(testFileUrl) {
  const entries = packageEntries(fileURLToPath(new URL("..", testFileUrl)));
  let api;
  beforeAll(() => {
    api = readApi(entries.map((entry) => entry.types));
  }, 120_000);
  describe("public API (pinned: a change here must be deliberate)", () => {
    for (const entry of entries) {
      it(`${entry.specifier}: declared surface`, async () => {
        await expect(api.get(entry.types).text).toMatchFileSnapshot(
          fileURLToPath(new URL(`./__snapshots__/${entry.name}.api.txt`, testFileUrl)),
        );
      });
      it(`${entry.specifier}: runtime exports are the declared values`, async () => {
        const loaded = await import(pathToFileURL(entry.js).href);
        expect(Object.keys(loaded).sort()).toEqual([...api.get(entry.types).valueNames].sort());
      });
    }
  });
}
