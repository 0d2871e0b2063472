/**
 * The grants view: which agent may use which secret, for what, how often and where; a form to
 * add one, Approve for pending ones and Revoke for live ones. A grant holds no value, only the
 * secret's id; purposes and agent names are escaped like everything else the console shows.
 *
 * @module
 */
import { csrfField, postButton, seg, when } from "../format.ts";
import { html, type SafeHtml } from "../html.ts";
import type { GrantView } from "../ports.ts";

const STATE_CLASS: Record<string, string> = {
  active: "ok",
  pending: "state-withdrawn",
  used: "state-withdrawn",
  expired: "bad",
  revoked: "bad",
};

/** The grants page body. */
export function grantsBody(
  grants: readonly GrantView[],
  csrf: string,
  notice: SafeHtml | "",
): SafeHtml {
  const table = grants.length === 0
    ? html`<p class="empty">No grants: no agent may use a secret.</p>`
    : html`
      <table>
        <thead>
          <tr>
            <th>Grant</th>
            <th>State</th>
            <th>Secret</th>
            <th>Agent</th>
            <th>Purpose</th>
            <th>Mode</th>
            <th>Uses</th>
            <th>Expires</th>
            <th>Redeemed</th>
            <th></th>
          </tr>
        </thead>
        <tbody>${grants.map((g) => grantRow(g, csrf))}</tbody>
      </table>
    `;
  return html`
    ${notice}<form method="post" action="/grants" class="row">${csrfField(csrf)}
    <label>Secret id <input name="secret_id" placeholder="shop.password" required maxlength="64"></label>
    <label>Agent <input name="agent" placeholder="ci-bot" required maxlength="64"></label>
    <label>Purpose <input name="purpose" placeholder="log in to the shop" required maxlength="200"></label>
    <label>Mode <select name="mode"><option value="once">once</option><option value="session">session</option><option value="standing">standing</option></select></label>
    <label>Expires <input name="expires" placeholder="24h, 7d or an ISO time" maxlength="40"></label>
    <label>Fill on (origins, comma-separated) <input name="fill" placeholder="https://portal.example" maxlength="3000"></label>
    <label>Capture on <input name="capture" placeholder="https://portal.example" maxlength="3000"></label>
    <label>Workflow <input name="workflow" placeholder="github_app" maxlength="64"></label>
    <label>Output <input name="output" placeholder="pem" maxlength="64"></label>
    <label>Approve now <input type="checkbox" name="approve" value="on"></label>
    <button type="submit">Add grant</button>
    </form>
    <p
      class="muted">A grant lets the runtime fill or capture the secret for that agent on those exact origins only (the origin is read from the browser, never from the model). Without “Approve now” it waits here for approval. Revoking applies to the next redemption.</p>
    ${table}
  `;
}

function grantRow(g: GrantView, csrf: string): SafeHtml {
  const actions = [
    g.state === "pending"
      ? postButton(`/grants/${seg(g.id)}/approve`, "Approve", csrf, {}, "approve")
      : "",
    g.state !== "revoked"
      ? postButton(`/grants/${seg(g.id)}/revoke`, "Revoke", csrf, {}, "danger")
      : "",
  ];
  const uses = g.uses.map((u) =>
    html`<div><strong>${u.kind}</strong> ${u.allowed_origins.join(", ")}</div>`
  );
  const bound = g.mode === "session" && g.session_id
    ? html`<div class="muted mono">${g.session_id}</div>`
    : "";
  return html`
    <tr>
      <td class="mono">${g.id}</td>
      <td class="${STATE_CLASS[g.state] ?? ""}">${g
        .state}${g.revoke_reason && g.revoke_reason !== "GRANT_REVOKED"
        ? html`<div class="muted">${g.revoke_reason}</div>`
        : ""}</td>
      <td class="mono">${g.secret_id}</td>
      <td>${g.agent}</td>
      <td>${g.purpose}</td>
      <td>${g.mode}${bound}</td>
      <td>${uses}</td>
      <td>${when(g.expires_at)}</td>
      <td>${g.redemptions}${g.last_redeemed_at
        ? html`<div class="muted">${when(g.last_redeemed_at)}</div>`
        : ""}</td>
      <td>${actions}</td>
    </tr>
  `;
}
