import { describe, expect, it } from "vitest";
import { WriteBatcher } from "../src/write-batcher.js";

/** A `send` that records its batches and answers when told to. */
function recorder() {
  const batches: number[][] = [];
  const answers: ((fail?: unknown) => void)[] = [];
  const send = (items: readonly number[]) => {
    batches.push([...items]);
    return new Promise<number[]>((resolve, reject) => {
      answers.push((fail) =>
        fail === undefined ? resolve(items.map((x) => x * 10)) : reject(fail),
      );
    });
  };
  return { batches, answers, send };
}

const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

describe("WriteBatcher", () => {
  it("sends the writes of one turn as one batch and answers each its own", async () => {
    const r = recorder();
    const batcher = new WriteBatcher(r.send, {});
    const results = Promise.all([1, 2, 3].map((x) => batcher.submit(x)));
    expect(r.batches).toEqual([]); // nothing leaves before the turn ends
    await turn();
    expect(r.batches).toEqual([[1, 2, 3]]);
    r.answers[0]!();
    expect(await results).toEqual([10, 20, 30]);
    expect(batcher.batches).toBe(1);
  });

  it("keeps at most maxInFlight batches out; what arrives meanwhile goes together next", async () => {
    const r = recorder();
    const batcher = new WriteBatcher(r.send, { maxInFlight: 1 });
    const first = batcher.submit(1);
    await turn();
    const later = [2, 3].map((x) => batcher.submit(x));
    await turn();
    const last = batcher.submit(4);
    await turn();
    expect(r.batches).toEqual([[1]]);
    r.answers[0]!();
    expect(await first).toBe(10);
    await turn();
    expect(r.batches).toEqual([[1], [2, 3, 4]]);
    r.answers[1]!();
    expect(await Promise.all([...later, last])).toEqual([20, 30, 40]);
    await batcher.idle();
  });

  it("splits a queue longer than maxBatch", async () => {
    const r = recorder();
    const batcher = new WriteBatcher(r.send, { maxBatch: 2, maxInFlight: 5 });
    const results = Promise.all([1, 2, 3, 4, 5].map((x) => batcher.submit(x)));
    await turn();
    expect(r.batches).toEqual([[1, 2], [3, 4], [5]]);
    for (const answer of r.answers) answer();
    expect(await results).toEqual([10, 20, 30, 40, 50]);
  });

  it("sends a refused batch again one write at a time, so one bad write fails alone", async () => {
    const batcher = new WriteBatcher<number, number>(
      async (items) => {
        if (items.includes(2)) throw new Error(`refused ${items.join(",")}`);
        return items.map((x) => x * 10);
      },
      { isolate: () => true },
    );
    const results = await Promise.allSettled([1, 2, 3].map((x) => batcher.submit(x)));
    expect(results.map((r) => (r.status === "fulfilled" ? r.value : String(r.reason)))).toEqual([
      10,
      "Error: refused 2",
      30,
    ]);
    expect(batcher.batches).toBe(4);
  });

  it("fails every write of a batch at once when the failure would only repeat", async () => {
    const down = new Error("unreachable");
    const batcher = new WriteBatcher<number, number>(
      async () => {
        throw down;
      },
      { isolate: (error) => error !== down },
    );
    const results = await Promise.allSettled([1, 2, 3].map((x) => batcher.submit(x)));
    expect(results).toEqual([1, 2, 3].map(() => ({ status: "rejected", reason: down })));
    expect(batcher.batches).toBe(1);
  });

  it("fails, unsent, a write that waited longer than maxQueuedMs behind a slow batch", async () => {
    const r = recorder();
    const expired = new Error("waited too long");
    const batcher = new WriteBatcher(r.send, {
      maxInFlight: 1,
      maxQueuedMs: 30,
      expired: () => expired,
    });
    const first = batcher.submit(1);
    await turn();
    const stale = batcher.submit(2);
    const staleSettled = stale.then(
      () => "sent",
      (error) => error,
    );
    await new Promise((resolve) => setTimeout(resolve, 60));
    const fresh = batcher.submit(3);
    await turn();
    r.answers[0]!();
    expect(await first).toBe(10);
    expect(await staleSettled).toBe(expired);
    await turn();
    expect(r.batches).toEqual([[1], [3]]);
    r.answers[1]!();
    expect(await fresh).toBe(30);
  });

  it("idle waits for the batches in flight", async () => {
    const r = recorder();
    const batcher = new WriteBatcher(r.send, {});
    const result = batcher.submit(1);
    await turn();
    let idle = false;
    const waiting = batcher.idle().then(() => {
      idle = true;
    });
    await turn();
    expect(idle).toBe(false);
    r.answers[0]!();
    await waiting;
    expect(await result).toBe(10);
  });
});
