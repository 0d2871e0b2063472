/**
 * Myers' shortest edit script between two sequences, compared only through a `same(x, y)`
 * predicate: nothing here knows about outlines (`diff.ts` gives it its meaning). Time
 * O((N+M)·D), memory O(D²) for the walk back, and a cap on D, so a caller bounds both.
 *
 * @module
 */

/** An edit that deletes before[x]. */
export const REMOVED = 2;
/** An edit that inserts after[y]. */
export const ADDED = 1;

/**
 * Myers' shortest edit script from before[b0, b1) to after[a0, a1) under `same`, as flat
 * triples (op, x, y) in page order with absolute indices: REMOVED deletes before[x],
 * ADDED inserts after[y]. `undefined` if it needs more than `maxD` edits. Time
 * O((N+M)·D), memory O(D²) for the walk back.
 */
export function shortestEdit(
  b0: number,
  b1: number,
  a0: number,
  a1: number,
  same: (x: number, y: number) => boolean,
  maxD: number,
): number[] | undefined {
  const n = b1 - b0;
  const m = a1 - a0;
  const max = Math.min(n + m, maxD);
  const off = max + 1;
  const v = new Int32Array(2 * max + 3);
  // trace[d] is v over k ∈ [-d-1, d+1] before step d, enough to walk back from step d.
  const trace: Int32Array[] = [];
  let found = -1;
  search: for (let d = 0; d <= max; d++) {
    trace.push(v.slice(off - d - 1, off + d + 2));
    for (let k = -d; k <= d; k += 2) {
      let x = k === -d || (k !== d && v[off + k - 1] < v[off + k + 1])
        ? v[off + k + 1]
        : v[off + k - 1] + 1;
      let y = x - k;
      while (x < n && y < m && same(b0 + x, a0 + y)) {
        x++;
        y++;
      }
      v[off + k] = x;
      if (x >= n && y >= m) {
        found = d;
        break search;
      }
    }
  }
  if (found < 0) return undefined;
  const rev: number[] = [];
  let x = n;
  for (let d = found, y = m; d > 0; d--) {
    const vp = trace[d];
    const k = x - y;
    const down = k === -d || (k !== d && vp[k - 1 + d + 1] < vp[k + 1 + d + 1]);
    const pk = down ? k + 1 : k - 1;
    x = vp[pk + d + 1];
    y = x - pk;
    rev.push(down ? ADDED : REMOVED, b0 + x, a0 + y);
  }
  const out: number[] = [];
  for (let s = rev.length - 3; s >= 0; s -= 3) out.push(rev[s], rev[s + 1], rev[s + 2]);
  return out;
}
