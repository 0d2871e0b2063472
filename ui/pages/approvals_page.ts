/**
 * The approvals view: what waits for a decision, with Approve and Deny, and what was
 * decided lately. The table is also served alone (`/approvals/table`) for the live refresh.
 *
 * @module
 */
import { postButton, seg, when } from "../format.ts";
import { html, type SafeHtml } from "../html.ts";
import type { ApprovalView, FieldView } from "../ports.ts";

function fieldList(fields: readonly FieldView[]): SafeHtml {
  if (fields.length === 0) return html`<span class="muted">no fields</span>`;
  return html`<dl>${
    fields.map((f) =>
      html`
        <dt>${f.name}</dt>
        <dd>${f.value}</dd>
      `
    )
  }</dl>`;
}

function pendingRow(a: ApprovalView, csrf: string): SafeHtml {
  const action = `/approvals/${seg(a.id)}`;
  return html`
    <tr data-pending="${a.id}">
      <td>${a.agent ?? "—"}</td>
      <td class="mono">${a.session}</td>
      <td>${a.origin}</td>
      <td class="url"><strong>${a.method}</strong> <code>${a.url}</code></td>
      <td class="fields">${fieldList(a.fields)}</td>
      <td>${when(a.expires_at)}</td>
      <td>${postButton(action, "Approve", csrf, { decision: "approve" }, "approve")}${postButton(
        action,
        "Deny",
        csrf,
        { decision: "deny" },
        "deny",
      )}</td>
    </tr>
  `;
}

function decidedRow(a: ApprovalView): SafeHtml {
  return html`
    <tr>
      <td>${when(a.decided_at)}</td>
      <td class="state-${a.state}">${a.state}</td>
      <td>${a.decided_by ?? "—"}</td>
      <td>${a.agent ?? "—"}</td>
      <td>${a.origin}</td>
      <td class="url"><strong>${a.method}</strong> <code>${a.url}</code></td>
    </tr>
  `;
}

/** The live part: pending approvals, then recent ones. */
export function approvalsTable(
  pending: readonly ApprovalView[],
  decided: readonly ApprovalView[],
  csrf: string,
): SafeHtml {
  const waiting = pending.length === 0
    ? html`<p class="empty">Nothing waits for a decision.</p>`
    : html`
      <table>
        <thead>
          <tr>
            <th>Agent</th>
            <th>Session</th>
            <th>Page origin</th>
            <th>Request</th>
            <th>Fields</th>
            <th>Expires</th>
            <th>Decision</th>
          </tr>
        </thead>
        <tbody>${pending.map((a) => pendingRow(a, csrf))}</tbody>
      </table>
    `;
  const recent = decided.length === 0 ? html`<p class="empty">None yet.</p>` : html`
    <table>
      <thead>
        <tr>
          <th>When</th>
          <th>Outcome</th>
          <th>By</th>
          <th>Agent</th>
          <th>Page origin</th>
          <th>Request</th>
        </tr>
      </thead>
      <tbody>${decided.slice(0, 50).map(decidedRow)}</tbody>
    </table>
  `;
  return html`<h2>Waiting (${pending.length})</h2>
${waiting}
<h2>Recent</h2>
${recent}`;
}

/** The approvals page body. */
export function approvalsBody(table: SafeHtml, notice: SafeHtml | ""): SafeHtml {
  return html`
    ${notice}<p
      class="muted">A form submission the policy marks <code>confirm</code> waits here until you decide, it expires, or the agent gives up. Field values of passwords and secrets are redacted. Click anywhere once to enable the arrival beep.</p>
    <div data-live="/approvals/table">${table}</div>
  `;
}
