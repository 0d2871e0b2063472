/**
 * The audit view: the latest rows (filtered by session or decision, paged back by `seq`),
 * the chain's status and the JSONL export.
 *
 * @module
 */
import { when } from "../format.ts";
import { html, type SafeHtml } from "../html.ts";
import type { AuditCheck, AuditFilter } from "../ports.ts";
import type { AuditRow } from "../../runtime/store/mod.ts";

const DECISIONS = ["", "allow", "deny", "confirm", "event"];

function filterForm(filter: AuditFilter): SafeHtml {
  return html`
    <form method="get" action="/audit" class="row">
      <label>Session <input name="session" value="${filter.session ?? ""}" maxlength="100"></label>
      <label>Decision <select name="decision">${DECISIONS.map((d) =>
        html`
          <option value="${d}" ${filter.decision === d
            ? html`
              selected
            `
            : ""}>${d || "any"}</option>
        `
      )}</select></label>
      <label>Rows <input name="limit" type="number" min="1" max="1000" value="${filter
        .limit}"></label>
      <button type="submit">Filter</button>
    </form>
  `;
}

function chain(check: AuditCheck): SafeHtml {
  return check.ok
    ? html`<p class="ok">Chain intact: ${check.rows} rows verify.</p>`
    : html`<p class="error">Chain broken after ${check.rows} rows: ${
      check.error ?? "unknown problem"
    }</p>`;
}

/** The audit page body. */
export function auditBody(
  rows: readonly AuditRow[],
  filter: AuditFilter,
  check: AuditCheck,
): SafeHtml {
  const table = rows.length === 0 ? html`<p class="empty">No rows.</p>` : html`
    <table>
      <thead>
        <tr>
          <th>Seq</th>
          <th>Time</th>
          <th>Session</th>
          <th>Agent</th>
          <th>Kind</th>
          <th>Source</th>
          <th>Origin</th>
          <th>Method</th>
          <th>Decision</th>
          <th>Reason</th>
          <th>Module</th>
          <th>Rule</th>
        </tr>
      </thead>
      <tbody>${rows.map((r) =>
        html`
          <tr>
            <td>${r.seq}</td>
            <td>${when(r.ts)}</td>
            <td class="mono">${r.session ?? ""}</td>
            <td>${r.agent ?? ""}</td>
            <td>${r.kind}</td>
            <td>${r.source}</td>
            <td>${r.origin ?? ""}</td>
            <td>${r.method ?? ""}</td>
            <td class="${r.decision === "deny" ? "bad" : r.decision === "allow" ? "ok" : ""}">${r
              .decision}</td>
            <td>${r.reason ?? ""}</td>
            <td>${r.module ?? ""}</td>
            <td>${r.rule ?? ""}</td>
          </tr>
        `
      )}</tbody>
    </table>
  `;
  const last = rows.at(-1);
  const older = last && rows.length >= filter.limit
    ? html`<p><a href="/audit?${olderQuery(filter, last.seq)}">Older rows</a></p>`
    : "";
  return html`${chain(check)}
<p><a href="/api/audit/export" download="omotai-audit.jsonl">Export as JSONL</a> <span class="muted">(every row with its hashes, oldest first; <code>omotai audit verify --jsonl FILE</code> checks it)</span></p>
${filterForm(filter)}
${table}
${older}`;
}

function olderQuery(filter: AuditFilter, before: number): string {
  const q = new URLSearchParams({ limit: String(filter.limit), before: String(before) });
  if (filter.session) q.set("session", filter.session);
  if (filter.decision) q.set("decision", filter.decision);
  return q.toString();
}
