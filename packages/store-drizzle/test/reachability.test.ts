import { describe, expect, it } from "vitest";
import { Reachability, UNREACHABLE_CODE } from "../src/reachability.js";
import { sleep } from "./helpers.js";

const refused = () => Promise.reject(Object.assign(new Error("refused"), { code: "ECONNREFUSED" }));
const never = () => new Promise<never>(() => {});
const codeOf = (promise: Promise<unknown>) =>
  promise.then(
    () => "ok",
    (error: { code?: string }) => String(error.code),
  );

describe("Reachability", () => {
  it("after a refused connect lets one probe through, fails the others at once, and ends with a success", async () => {
    const reach = new Reachability(10_000);
    expect(await codeOf(reach.run(refused))).toBe("ECONNREFUSED");
    let settle: (value: string) => void = () => {};
    const probe = reach.run(() => new Promise<string>((resolve) => (settle = resolve)));
    let started = false;
    const other = reach.run(async () => {
      started = true;
      return "sent";
    });
    expect(await codeOf(other)).toBe(UNREACHABLE_CODE);
    expect(started).toBe(false);
    settle("back");
    expect(await probe).toBe("back");
    // The probe's success ended the spell: statements go to the driver again, all at once.
    expect(await Promise.all([reach.run(async () => 1), reach.run(async () => 2)])).toEqual([1, 2]);
  });

  it("a probe the driver never answers holds the others back no longer than its timeout", async () => {
    const reach = new Reachability(50);
    expect(await codeOf(reach.run(refused))).toBe("ECONNREFUSED");
    void reach.run(never); // lost by the driver: never settles
    expect(await codeOf(reach.run(async () => "held"))).toBe(UNREACHABLE_CODE);
    await sleep(120);
    // The next statement goes as a new probe; its success ends the spell.
    expect(await reach.run(async () => "through")).toBe("through");
    expect(await reach.run(async () => "again")).toBe("again");
  });

  it("a late answer to an abandoned probe does not release the probe that replaced it", async () => {
    const reach = new Reachability(50);
    expect(await codeOf(reach.run(refused))).toBe("ECONNREFUSED");
    let answerFirst: () => void = () => {};
    const first = reach.run(
      () => new Promise<never>((_, reject) => (answerFirst = () => reject(new Error("late")))),
    );
    await sleep(120);
    const second = reach.run(never); // the new probe, still out
    answerFirst();
    expect(await codeOf(first)).toBe("undefined");
    expect(await codeOf(reach.run(async () => "held"))).toBe(UNREACHABLE_CODE);
    void second;
  });
});
