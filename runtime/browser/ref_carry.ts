/**
 * Refs that outlive a re-render or a navigation: an element the agent was shown, now gone,
 * hands its ref to the one new element that reads exactly like it (same role, name, target,
 * place in the outline). Search results redrawn, or the site's navigation on the next page
 * of the same origin, then keep the refs the agent already knows, so a diff or a folded page
 * can say "unchanged" instead of sending them again. Facts are always read from the element
 * the ref points to now; a carried ref changes what the agent must re-read, never what the
 * gate judges.
 *
 * @module
 */
import { splitRef } from "../snapshot/mod.ts";

/** Asks the ref table to give `fresh`'s element the ref `old`; false when it may not. */
export type Adopt = (old: string, fresh: string) => boolean;

/**
 * Rewrites `lines` (and the aligned `brief` lines) in place so that a freshly issued ref
 * (number ≥ `firstFresh`) whose line reads like the line of a ref in `before` that is no
 * longer on the page takes that old ref. Only one-to-one matches carry: a line text that is
 * on several gone or several fresh lines (twenty "Add to cart" buttons) keeps fresh refs,
 * since which one is which would be a guess. Returns how many refs were carried.
 */
export function carryRefs(
  before: readonly string[],
  lines: string[],
  brief: string[],
  firstFresh: number,
  adopt: Adopt,
): number {
  const present = new Set<number>();
  const fresh = new Map<string, number[]>();
  for (let i = 0; i < lines.length; i++) {
    const parts = splitRef(lines[i]);
    if (!parts) continue;
    present.add(parts.ref);
    if (parts.ref >= firstFresh) push(fresh, identity(parts), i);
  }
  if (fresh.size === 0) return 0;
  const gone = new Map<string, number[]>();
  for (const line of before) {
    const parts = splitRef(line);
    if (!parts || present.has(parts.ref)) continue;
    push(gone, identity(parts), parts.ref);
  }
  let carried = 0;
  for (const [key, at] of fresh) {
    const old = gone.get(key);
    if (at.length !== 1 || old?.length !== 1) continue;
    const i = at[0];
    const from = `e${splitRef(lines[i])!.ref}`;
    const to = `e${old[0]}`;
    if (!adopt(to, from)) continue;
    lines[i] = lines[i].replace(`[${from}]`, `[${to}]`);
    if (brief[i]) brief[i] = brief[i].replace(`[${from}]`, `[${to}]`);
    carried++;
  }
  return carried;
}

/** The line without its ref: what must read the same for a ref to carry. */
function identity(parts: { lead: string; rest: string }): string {
  return parts.lead + parts.rest;
}

function push<K, V>(map: Map<K, V[]>, key: K, value: V): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}
