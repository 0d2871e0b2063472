/**
 * Lists of refs as the runtime writes them in fold markers and collapsed removals:
 * consecutive numbers as a range, in the order given (`e1–e9, e81, e10–e12`). An agent
 * reads them back with {@link expandRefSpan} (the task bench's scripted agent does).
 *
 * @module
 */

/** `["e1","e2","e3","e7"]` → `e1–e3, e7`. */
export function refSpan(refs: readonly string[]): string {
  const parts: string[] = [];
  let i = 0;
  while (i < refs.length) {
    const start = Number(refs[i].slice(1));
    let j = i;
    while (j + 1 < refs.length && Number(refs[j + 1].slice(1)) === Number(refs[j].slice(1)) + 1) {
      j++;
    }
    parts.push(j === i ? refs[i] : j === i + 1 ? `${refs[i]}, ${refs[j]}` : `e${start}–${refs[j]}`);
    i = j + 1;
  }
  return parts.join(", ");
}

/** The refs a span names, ranges expanded: the inverse of {@link refSpan}. */
export function expandRefSpan(span: string): string[] {
  const out: string[] = [];
  for (const part of span.split(/,\s*/)) {
    const m = /^e(\d+)(?:–e(\d+))?$/.exec(part.trim());
    if (!m) continue;
    const to = Number(m[2] ?? m[1]);
    for (let n = Number(m[1]); n <= to && out.length < 100_000; n++) out.push(`e${n}`);
  }
  return out;
}
