/**
 * Pure helpers comparing what two snapshots expose: which links, buttons and inputs.
 *
 * @module
 */

/** The kinds of element the comparison counts. */
export type ControlClass = "link" | "button" | "input";

const CLASS_OF: Record<string, ControlClass> = {
  link: "link",
  button: "button",
  textbox: "input",
  searchbox: "input",
  combobox: "input",
  listbox: "input",
  checkbox: "input",
  radio: "input",
  spinbutton: "input",
  slider: "input",
  switch: "input",
  password: "input",
  editable: "input",
};

/** One exposed control: class and normalized name. */
export interface Control {
  cls: ControlClass;
  name: string;
}

function norm(name: string): string {
  return name.replace(/\\"/g, '"').replace(/\s+/g, " ").trim().slice(0, 60).toLowerCase();
}

/** Controls in a Playwright MCP aria snapshot (`- link "Name" [ref=e5]`). */
export function playwrightControls(text: string): Control[] {
  const out: Control[] = [];
  const re = /^\s*- (\w+)(?: "((?:[^"\\]|\\.)*)")?[^\n]*\[ref=(?:f\d+)?e\d+\]/gm;
  for (const m of text.matchAll(re)) {
    const cls = CLASS_OF[m[1]];
    if (cls) out.push({ cls, name: norm(m[2] ?? "") });
  }
  return out;
}

/** Controls in an Omotai outline (`[e5] "Name" -> /x` for a link, `[e6] button "Go"`). */
export function omotaiControls(text: string): Control[] {
  const out: Control[] = [];
  const re = /^(?:- )?\[e\d+\](?: (\w+))?(?: "((?:[^"\\]|\\.)*)")?( -> )?/gm;
  for (const m of text.matchAll(re)) {
    // No role word: a link (by its name or its arrow).
    const cls = CLASS_OF[m[1] ?? (m[2] !== undefined || m[3] ? "link" : "")];
    if (cls) out.push({ cls, name: norm(m[2] ?? "") });
  }
  return out;
}

/** How many of `reference`'s controls `candidate` also exposes (multiset match by class+name). */
export function coverage(reference: Control[], candidate: Control[]): {
  covered: number;
  total: number;
  missing: Control[];
} {
  const pool = new Map<string, number>();
  for (const c of candidate) {
    const k = `${c.cls}|${c.name}`;
    pool.set(k, (pool.get(k) ?? 0) + 1);
  }
  const unmatched: Control[] = [];
  let covered = 0;
  for (const r of reference) {
    const k = `${r.cls}|${r.name}`;
    const n = pool.get(k) ?? 0;
    if (n > 0) {
      pool.set(k, n - 1);
      covered++;
    } else unmatched.push(r);
  }
  // Playwright omits a name that its children spell out; such an entry matches any
  // leftover control of the same class.
  const missing: Control[] = [];
  for (const r of unmatched) {
    const spare = r.name === "" &&
      [...pool].find(([k, n]) => n > 0 && k.startsWith(`${r.cls}|`));
    if (spare) {
      pool.set(spare[0], spare[1] - 1);
      covered++;
    } else missing.push(r);
  }
  return { covered, total: reference.length, missing };
}

/** Median of a list of numbers. */
export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
}

/** Geometric mean of a list of positive numbers (NaN for an empty list). */
export function geomean(xs: readonly number[]): number {
  if (xs.length === 0) return NaN;
  return Math.exp(xs.reduce((s, x) => s + Math.log(x), 0) / xs.length);
}
