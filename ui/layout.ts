/**
 * The page shell: title, navigation, logout, the stylesheet and the live script.
 *
 * @module
 */
import { csrfField } from "./format.ts";
import { html, type SafeHtml } from "./html.ts";

/** The views, in navigation order. */
export const VIEWS = [
  ["approvals", "/", "Approvals"],
  ["questions", "/questions", "Questions"],
  ["sessions", "/sessions", "Sessions"],
  ["domains", "/domains", "Domains"],
  ["agents", "/agents", "Agents"],
  ["grants", "/grants", "Grants"],
  ["audit", "/audit", "Audit"],
  ["policies", "/policies", "Policies"],
] as const;

/** A view's key. */
export type ViewKey = typeof VIEWS[number][0];

/** What a page shows. */
export interface PageParts {
  title: string;
  view: ViewKey | null;
  /** The session's CSRF token (for the logout form); empty on pages without a session. */
  csrf: string;
  body: SafeHtml;
  /** The runtime's store does not answer: said above everything else. */
  storeDown?: boolean;
}

/** A whole console page. */
export function page({ title, view, csrf, body, storeDown }: PageParts): SafeHtml {
  const nav = VIEWS.map(([key, href, label]) =>
    html`<a href="${href}" class="${key === view ? "active" : ""}">${label}</a>`
  );
  const header = csrf
    ? html`<header><strong>Omotai console</strong><nav>${nav}</nav>
<form method="post" action="/logout" class="inline">${
      csrfField(csrf)
    }<button type="submit">Log out</button></form></header>`
    : html`<header><strong>Omotai console</strong></header>`;
  return html`
    <!doctype html>
    <html lang="en">
      <head>
    <meta charset="utf-8">
    <meta name="viewport" content="width=device-width, initial-scale=1">
    <title>${title} — Omotai</title>
    <link rel="stylesheet" href="/console.css">
    ${csrf ? html`<script src="/console.js" defer></script>` : ""}
      </head>
      <body>
    ${header}
    <main>
    ${storeDown
      ? html`
        <p class="alert bad"
          role="alert">The database does not answer: every action and request is refused until it does.</p>
      `
      : ""}
    <h1>${title}</h1>
    ${body}
    </main>
      </body>
    </html>
  `;
}
