/**
 * The domains view: the dynamic allow/deny rules, a form to add one, Remove buttons.
 *
 * @module
 */
import { csrfField, postButton, when } from "../format.ts";
import { html, type SafeHtml } from "../html.ts";
import type { DomainView } from "../ports.ts";

/** The domains page body. */
export function domainsBody(rules: readonly DomainView[], csrf: string): SafeHtml {
  const table = rules.length === 0
    ? html`<p class="empty">No dynamic rules: the policy file alone decides.</p>`
    : html`
      <table>
        <thead>
          <tr>
            <th>Origin</th>
            <th>Rule</th>
            <th>Added</th>
            <th></th>
          </tr>
        </thead>
        <tbody>${rules.map((r) =>
          html`
            <tr>
              <td>${r.origin}</td>
              <td class="${r.rule === "deny" ? "bad" : "ok"}">${r.rule}</td>
              <td>${when(r.added_at)}</td>
              <td>${postButton(
                "/domains/remove",
                "Remove",
                csrf,
                { origin: r.origin },
                "danger",
              )}</td>
            </tr>
          `
        )}</tbody>
      </table>
    `;
  return html`<form method="post" action="/domains" class="row">${csrfField(csrf)}
<label>Origin <input name="origin" placeholder="https://portal.example" required maxlength="300"></label>
<label>Rule <select name="rule"><option value="allow">allow</option><option value="deny">deny</option></select></label>
<button type="submit">Add</button>
</form>
<p class="muted">A rule applies to the next action and the next request of every session.</p>
${table}`;
}
