/**
 * The login page: one field for the admin token.
 *
 * @module
 */
import { html, type SafeHtml } from "../html.ts";
import { page } from "../layout.ts";

/** The whole login page, with an error line when the last attempt failed. */
export function loginPage(error?: string): SafeHtml {
  return page({
    title: "Log in",
    view: null,
    csrf: "",
    body: html`<div class="login">
${error ? html`<p class="error">${error}</p>` : ""}
<form method="post" action="/login">
<label>Admin token <input name="token" type="password" autocomplete="current-password" required autofocus></label>
<button type="submit">Log in</button>
</form>
<p class="muted">The admin token is printed by <code>omotai start</code> (or set with <code>OMOTAI_ADMIN_TOKEN</code>). An agent key does not open the console.</p>
</div>`,
  });
}
