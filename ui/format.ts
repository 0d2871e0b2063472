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
