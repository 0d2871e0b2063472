/**
 * Short pages and notices: an error page, and the fixed notices shown after a form post
 * (chosen by code, so nothing from the request is echoed).
 *
 * @module
 */
import { html, type SafeHtml } from "../html.ts";
import { page } from "../layout.ts";

const NOTICES: Record<string, string> = {
  not_pending: "That request was no longer waiting: it was decided, expired or withdrawn.",
  unknown: "That request is not known (any more).",
  grant_not_pending: "That grant was no longer pending: it was approved, expired or revoked.",
  grant_already_revoked: "That grant was revoked already.",
  grant_unknown: "That grant is not known.",
};

/** The notice for `code` (a query parameter), or nothing for an unknown code. */
export function notice(code: string | undefined): SafeHtml | "" {
  const text = code ? NOTICES[code] : undefined;
  return text ? html`<p class="notice">${text}</p>` : "";
}

/** A page saying what went wrong, with a way back. */
export function errorPage(status: number, message: string, csrf: string): SafeHtml {
  return page({
    title: `Error ${status}`,
    view: null,
    csrf,
    body: html`
      <p class="error">${message}</p>
      <p><a href="/">Back to the console</a></p>
    `,
  });
}
