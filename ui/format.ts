/**
 * Small renderings shared by the pages: times, yes/no, hidden CSRF fields, post buttons.
 *
 * @module
 */
import { html, type SafeHtml } from "./html.ts";

/** An ISO time as `YYYY-MM-DD HH:MM:SSZ` (UTC), or a dash. */
export function when(iso: string | null | undefined): string {
  if (!iso) return "—";
  const t = Date.parse(iso);
  if (Number.isNaN(t)) return iso;
  return new Date(t).toISOString().slice(0, 19).replace("T", " ") + "Z";
}

/** The hidden CSRF field every console form carries. */
export function csrfField(csrf: string): SafeHtml {
  return html`<input type="hidden" name="csrf" value="${csrf}">`;
}

/** A one-button form posting `fields` to `action`. */
export function postButton(
  action: string,
  label: string,
  csrf: string,
  fields: Record<string, string> = {},
  cls = "",
): SafeHtml {
  const hidden = Object.entries(fields).map(([name, value]) =>
    html`<input type="hidden" name="${name}" value="${value}">`
  );
  return html`
    <form method="post" action="${action}"
      class="inline">${csrfField(
        csrf,
      )}${hidden}<button type="submit" class="${cls}">${label}</button></form>
  `;
}

/** A path segment, encoded. */
export function seg(value: string): string {
  return encodeURIComponent(value);
}

/**
 * Everything that hides, reorders or draws nothing on screen: controls, line and paragraph
 * separators, format characters (bidi overrides, zero-width), unassigned code points, lone
 * surrogates and the letters or marks that are blank. The runtime's `RequestView` has them
 * escaped already (runtime/net/request_view.ts, which `ui/` may import types of only, hence
 * this copy); the pages pass every page-made string through `visible()` as well, so a value
 * that reached them some other way still cannot reorder what the operator reads.
 */
const HIDDEN =
  /[\p{Cc}\p{Cf}\p{Cn}\p{Cs}\p{Zl}\p{Zp}\u034F\u115F\u1160\u17B4\u17B5\u180B-\u180F\u2800\u3164\uFE00-\uFE0F\uFFA0\u{E0000}-\u{E0FFF}]/gu;

/** `text` with every hidden character as a visible `\u{XXXX}` escape. */
export function visible(text: string): string {
  return text.replace(
    HIDDEN,
    (ch) => `\\u{${(ch.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, "0")}}`,
  );
}
