import assert from "node:assert/strict";
import { ByteRate, type ByteRateLimits, type Pace } from "./byte_rate.ts";

/** One step of a vector: at `at` ms, `take` bytes; the pace the meter must answer. */
type Step = [at: number, take: number, pace: Pace];

const go: Pace = { kind: "go" };
const wait = (ms: number): Pace => ({ kind: "wait", ms });
const flood: Pace = { kind: "flood" };

/** 1,000 bytes/s, a 2,000-byte bucket, ended after 5 s over the rate. */
const LIMITS: ByteRateLimits = { bytesPerSec: 1_000, burstBytes: 2_000, floodMs: 5_000 };

const VECTORS: { name: string; steps: Step[] }[] = [
  {
    name: "a burst within the bucket goes on, and the bucket refills at the rate",
    steps: [[0, 2_000, go], [1_000, 1_000, go], [3_000, 2_000, go]],
  },
  {
    name: "a take past empty waits off its debt at the rate",
    steps: [[0, 2_000, go], [0, 500, wait(500)], [500, 1_000, wait(1_000)]],
  },
  {
    name: "a browser that stays over the rate is ended floodMs after its spell began",
    steps: [
      [0, 2_000, go],
      [0, 1_000, wait(1_000)],
      [1_000, 1_000, wait(1_000)],
      [2_000, 1_000, wait(1_000)],
      [3_000, 1_000, wait(1_000)],
      [4_000, 1_000, wait(1_000)],
      [4_999, 0, wait(1)],
      [5_000, 1, flood],
    ],
  },
  {
    name: "a spell ends only once the bucket is half full again (a late timer is no pause)",
    steps: [
      [0, 2_000, go],
      [0, 1_000, wait(1_000)],
      // 300 ms late: out of debt, not half full, so the spell goes on.
      [1_300, 250, go],
      [1_300, 1_000, wait(950)],
      [2_250, 1_000, wait(1_000)],
      [3_250, 1_000, wait(1_000)],
      [5_000, 1_000, flood],
    ],
  },
  {
    name: "a browser quiet long enough to half-fill the bucket starts a new spell",
    steps: [
      [0, 2_000, go],
      [0, 1_000, wait(1_000)],
      [2_000, 0, go],
      [2_000, 3_000, wait(2_000)],
      [4_000, 2_000, wait(2_000)],
      [6_000, 2_000, wait(2_000)],
      [6_999, 999, wait(2_000)],
      [7_000, 1, flood],
    ],
  },
  {
    name: "a refill never goes above the bucket, however long the pause",
    steps: [[0, 0, go], [3_600_000, 2_000, go], [3_600_000, 1, wait(1)]],
  },
  {
    name: "a clock that goes back refills nothing",
    steps: [[1_000, 2_000, go], [0, 1_000, wait(1_000)]],
  },
];

for (const v of VECTORS) {
  Deno.test(`ByteRate.take(): ${v.name}`, () => {
    let now = 0;
    const meter = new ByteRate(LIMITS, () => now);
    v.steps.forEach(([at, take, pace], i) => {
      now = at;
      assert.deepEqual(meter.take(take), pace, `step ${i} (at ${at} ms, ${take} bytes)`);
    });
    assert.equal(meter.total, v.steps.reduce((n, [, take]) => n + take, 0));
  });
}

Deno.test("ByteRate.take(): floodMs 0 ends a browser at its first byte past the bucket", () => {
  const meter = new ByteRate({ ...LIMITS, floodMs: 0 }, () => 0);
  assert.deepEqual(meter.take(2_000), go);
  assert.deepEqual(meter.take(1), flood);
});

Deno.test("ByteRate refuses limits that would never refill or never end", () => {
  for (
    const bad of [{ bytesPerSec: 0 }, { bytesPerSec: Number.NaN }, { burstBytes: -1 }, {
      floodMs: -1,
    }]
  ) {
    assert.throws(() => new ByteRate({ ...LIMITS, ...bad }), RangeError, JSON.stringify(bad));
  }
});
