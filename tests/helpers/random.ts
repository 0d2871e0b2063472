/**
 * A seeded xorshift32 generator for tests that mutate inputs: the same seed gives the same
 * sequence on every run, so a failure can be replayed.
 *
 * @module
 */

/** Returns a function yielding numbers in [0, 1) from `seed` (non-zero). */
export function seededRandom(seed: number): () => number {
  let state = seed | 0;
  return () => {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    return (state >>> 0) / 2 ** 32;
  };
}
