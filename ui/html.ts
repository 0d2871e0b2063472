/**
 * HTML built from a tagged template that escapes every value: page origins, agent names and
 * form fields come from untrusted pages and agents. Only `SafeHtml`, which `html` itself
 * makes, goes in unescaped.
 *
 * @module
 */

/** Markup already escaped (or written by the console itself). */
export class SafeHtml {
  /** The markup. */
  readonly value: string;
  constructor(value: string) {
    this.value = value;
  }
  /** The markup, so a `SafeHtml` can be handed to `c.html()`. */
  toString(): string {
    return this.value;
  }
}

/** A value a template takes: text (escaped), markup, or a list of either. */
export type HtmlValue =
  | string
  | number
  | boolean
  | null
  | undefined
  | SafeHtml
  | readonly HtmlValue[];

const ENTITIES: Record<string, string> = {
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  '"': "&quot;",
  "'": "&#39;",
};

/** `text` with `& < > " '` escaped: safe in element content and quoted attributes. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (ch) => ENTITIES[ch]);
}

function render(value: HtmlValue): string {
  if (value === null || value === undefined || value === false) return "";
  if (value instanceof SafeHtml) return value.value;
  if (Array.isArray(value)) return value.map(render).join("");
  return escapeHtml(String(value));
}

/** The template tag: `html\`<td>${origin}</td>\`` escapes `origin`. */
export function html(strings: TemplateStringsArray, ...values: HtmlValue[]): SafeHtml {
  let out = strings[0];
  for (let i = 0; i < values.length; i++) out += render(values[i]) + strings[i + 1];
  return new SafeHtml(out);
}
