/**
 * How the page log becomes text: CDP values rendered from what CDP reported (never by
 * calling back into the page), `%s`-style substitutions, URL queries cut off, control
 * characters escaped onto one line. Split from `page_log.ts`, which keeps the per-tab log;
 * this is the pure text side of it.
 *
 * @module
 */
import type { Protocol } from "../../cdp/mod.ts";
import { LINE_BREAKS } from "../snapshot/mod.ts";

/** Roughly what CDP carried for these values: their strings and descriptions. */
export function sizeOf(values: Protocol.Runtime.RemoteObject[]): number {
  let n = 0;
  for (const v of values) {
    n += (typeof v.value === "string" ? v.value.length : 0) + (v.description?.length ?? 0);
  }
  return n;
}

/** The arguments of a `console.*` call as one string, `%s`-style substitutions applied. */
export function formatArgs(args: Protocol.Runtime.RemoteObject[]): string {
  const first = args[0];
  if (first?.type !== "string" || typeof first.value !== "string" || !first.value.includes("%")) {
    return args.map(renderValue).join(" ");
  }
  let next = 1;
  const head = first.value.replace(/%([sdifoOc%])/g, (m, c: string) => {
    if (c === "%") return "%";
    if (next >= args.length) return m;
    const arg = args[next++];
    // %c carries CSS for the devtools console, nothing a reader needs.
    return c === "c" ? "" : renderValue(arg);
  });
  return [head, ...args.slice(next).map(renderValue)].join(" ");
}

/** One CDP value as text, from what CDP sent (never by asking the page). */
export function renderValue(o: Protocol.Runtime.RemoteObject): string {
  if (o.type === "string") return typeof o.value === "string" ? o.value : "";
  if (o.unserializableValue !== undefined) return o.unserializableValue;
  if (o.type === "undefined") return "undefined";
  if (o.subtype === "null") return "null";
  if (o.type === "number" || o.type === "boolean" || o.type === "bigint") {
    return o.value !== undefined ? String(o.value) : (o.description ?? o.type);
  }
  if (o.preview && o.subtype !== "error") return renderPreview(o.preview);
  return o.description ?? o.className ?? o.type;
}

/** An object's CDP preview as `Name {a: 1, b: "x"}` or `Array(2) [1, 2]`. */
function renderPreview(p: Protocol.Runtime.ObjectPreview): string {
  const isArray = p.subtype === "array" || p.subtype === "typedarray";
  const props = p.properties.map((q) => {
    const value = q.type === "string"
      ? JSON.stringify(q.value ?? "")
      : q.valuePreview
      ? (q.valuePreview.description ?? q.valuePreview.type)
      : (q.value ?? q.subtype ?? q.type);
    return isArray && /^\d+$/.test(q.name) ? value : `${q.name}: ${value}`;
  });
  if (p.overflow) props.push("…");
  if (isArray) return `${p.description ?? "Array"} [${props.join(", ")}]`;
  const name = p.description && p.description !== "Object" ? `${p.description} ` : "";
  return `${name}{${props.join(", ")}}`;
}

/**
 * Cuts the query and fragment off every URL-like word of page text (`https://h/p?t=…`,
 * `//h/p?…`, `/p?…`, `x?next=https://h/?t=…`): a page or an error message may quote a URL
 * with a token in it. A word loses everything from the first `?` or `#` after its first
 * `/`. Linear in the text (a page controls it: no backtracking pattern runs over it).
 */
export function scrubUrls(text: string): string {
  return text.replace(/[^\s"'<>`]+/g, (word) => {
    const slash = word.indexOf("/");
    if (slash < 0) return word;
    const q = word.slice(slash).search(/[?#]/);
    return q < 0 ? word : word.slice(0, slash + q);
  });
}

/**
 * Line breaks (every one a reader may take for one: `LINE_BREAKS`) become visible `\n`, other
 * control characters spaces: one message, one line.
 */
export function oneLine(text: string): string {
  // Control characters are exactly what must not reach the answer raw.
  // deno-lint-ignore no-control-regex
  return text.replace(LINE_BREAKS, "\\n").replace(/[\u0000-\u001f\u007f-\u009f]/g, " ");
}
