/**
 * The approvals view: the exact requests that wait for a decision, with Approve and Deny,
 * and what was decided lately. The table is also served alone (`/approvals/table`) for the
 * live refresh.
 *
 * What the operator approves is the request shown, so everything of it is on the page: the
 * method, the whole URL, every query entry and every body entry, none dropped and none cut.
 * A long text folds into a `<details>` that says its full length and holds all of it.
 * Characters that would hide or reorder text arrive as escapes (`\u{202E}`); they are
 * highlighted, and the text and its row carry a warning.
 *
 * @module
 */
import type { RequestView, ShownEntry, ShownText, TextFlag } from "../../runtime/net/mod.ts";
import { postButton, seg, visible, when } from "../format.ts";
import { html, type HtmlValue, type SafeHtml } from "../html.ts";
import type { ApprovalView } from "../ports.ts";

/** Texts longer than this (code points as shown) fold; the fold shows this many first. */
export const FOLD_AT = 200;

/** An escape of `RequestView` text: `\u{…}`, `\n`, `\r`, `\t`, or `\\` (a real backslash). */
const ESCAPE = /\\(?:u\{[0-9A-F]+\}|[nrt\\])/g;
/** One escape or one code point: the units a fold counts and never splits. */
const UNIT = /\\(?:u\{[0-9A-F]+\}|[nrt\\])|[\s\S]/gu;

/** `text` with its escapes highlighted; a doubled backslash stays plain (it is a literal). */
function marked(text: string): SafeHtml {
  const out: HtmlValue[] = [];
  let last = 0;
  for (const m of text.matchAll(ESCAPE)) {
    if (m.index > last) out.push(visible(text.slice(last, m.index)));
    out.push(m[0] === "\\\\" ? m[0] : html`<mark class="esc">${m[0]}</mark>`);
    last = m.index + m[0].length;
  }
  out.push(visible(text.slice(last)));
  return html`${out}`;
}

/** The first `max` units of `text`, or null when it has no more than `max`. */
function head(text: string, max: number): string | null {
  if (text.length <= max) return null;
  let units = 0;
  let end = 0;
  for (const m of text.matchAll(UNIT)) {
    if (units === max) return text.slice(0, end);
    units++;
    end = m.index + m[0].length;
  }
  return null;
}

function flagBadge(flags: readonly TextFlag[]): SafeHtml | "" {
  if (flags.length === 0) return "";
  return html`<span class="flag" title="holds characters shown as highlighted escapes">⚠ ${
    flags.join(", ")
  }</span>`;
}

/** The warning of a whole request, on its row. */
function rowBadge(flags: readonly TextFlag[]): SafeHtml | "" {
  const hidden = flags.includes("bidi") || flags.includes("invisible");
  return html`${hidden ? html`<span class="badge">⚠ invisible/bidi characters</span>` : ""}${
    flags.includes("control") ? html`<span class="badge">⚠ control characters</span>` : ""
  }`;
}

/** A shown text, whole: folded into a `<details>` when long; `key` keeps it open on refresh. */
function shown(t: ShownText, key: string): SafeHtml {
  const cls = t.flags.length > 0 ? "shown flagged" : "shown";
  const first = head(t.text, FOLD_AT);
  if (first === null) {
    return html`<span class="${cls}">${marked(t.text)}</span>${flagBadge(t.flags)}`;
  }
  return html`
    <details class="fold" data-fold="${key}">
      <summary><span class="${cls}">${marked(first)}</span>… (${t.length} characters)</summary>
      <div class="${cls} whole">${marked(t.text)}</div>
    </details>${flagBadge(t.flags)}
  `;
}

function fileInfo(file: NonNullable<ShownEntry["file"]>, key: string): SafeHtml {
  return html`
    <span
      class="file">file ${shown(
        file.filename,
        key,
      )} <span class="muted">(${visible(file.content_type) || "no type"}, ${file
        .size} bytes, sha256 <code>${file.sha256}</code>)</span></span>
  `;
}

function entryList(entries: readonly ShownEntry[], key: string): SafeHtml {
  return html`<dl data-scroll="${key}">${
    entries.map((e, i) =>
      html`
        <dt>${shown(e.name, `${key}:${i}:n`)}</dt>
        <dd>${e.file ? fileInfo(e.file, `${key}:${i}:f`) : shown(e.value, `${key}:${i}:v`)}</dd>
      `
    )
  }</dl>`;
}

const ENCODING: Record<RequestView["encoding"], string> = {
  none: "no body",
  urlencoded: "form, urlencoded",
  multipart: "form, multipart",
  text: "form, text/plain",
  opaque: "not form data",
};

function entries(n: number): string {
  return n === 1 ? "1 entry" : `${n} entries`;
}

/** The query and the body, every entry of each. */
function requestParts(r: RequestView, key: string): SafeHtml {
  const query = r.query.length === 0
    ? ""
    : html`<div class="part">Query: ${entries(r.query.length)}</div>${
      entryList(r.query, `${key}:q`)
    }`;
  // Headers a page may set change what a server does with the same body (a cookie, a
  // method override): they are part of what is approved.
  const headers = r.headers.length === 0
    ? ""
    : html`<div class="part">Headers: ${entries(r.headers.length)}</div>${
      entryList(r.headers, `${key}:h`)
    }`;
  if (r.encoding === "none" && r.size === 0) {
    return html`${query}${headers}<div class="part">No body.</div>`;
  }
  const meta = html`
    <div
      class="part">Body: ${ENCODING[r.encoding]}${r.encoding === "opaque"
        ? ""
        : html`, ${entries(r.entries.length)}`} <span class="muted">(${r.content_type === null
        ? "no Content-Type"
        : visible(r.content_type)}, ${r.size} bytes, sha256 <code>${r.sha256}</code>)</span></div>
  `;
  if (r.encoding === "opaque" && r.entries.length === 0) {
    return html`
      ${query}${headers}${meta}<p
        class="muted">Not shown: too large to show whole. Approve it only if you expect exactly this size and digest.</p>
    `;
  }
  return html`${query}${headers}${meta}${entryList(r.entries, `${key}:b`)}`;
}

function kindLabel(kind: string): string {
  return kind === "form"
    ? "form submission"
    : kind === "script"
    ? "script request (fetch/XHR)"
    : visible(kind);
}

function pendingRow(a: ApprovalView, csrf: string): SafeHtml {
  const action = `/approvals/${seg(a.id)}`;
  const r = a.request;
  return html`
    <tr data-pending="${a.id}" class="${r.flags.length > 0 ? "flagged" : ""}">
      <td>${visible(a.agent ?? "—")}</td>
      <td class="mono">${visible(a.session)}</td>
      <td>${visible(a.origin)}</td>
      <td class="request">
        <div><strong>${visible(r.method)}</strong> <span class="muted">${kindLabel(
          a.kind,
        )}</span>${rowBadge(r.flags)}</div>
        <div class="url mono">${shown(r.url, `${a.id}:u`)}</div>
        ${requestParts(r, a.id)}
      </td>
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
  const r = a.request;
  return html`
    <tr>
      <td>${when(a.decided_at)}</td>
      <td class="state-${a.state}">${a.state}</td>
      <td>${visible(a.decided_by ?? "—")}</td>
      <td>${visible(a.agent ?? "—")}</td>
      <td>${visible(a.origin)}</td>
      <td class="request"><strong>${visible(r.method)}</strong>${rowBadge(r.flags)}
        <div class="url mono">${shown(r.url, `${a.id}:d`)}</div></td>
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
      class="muted">A request the policy marks <code>confirm</code> is held here until you decide, it expires, or the agent gives up. Approved, exactly the request shown is sent, once. Stored secrets are redacted. Characters that hide or reorder text are shown as highlighted escapes such as <mark
        class="esc">\\u{202E}</mark>, and their row is marked. Click anywhere once to enable the arrival beep.</p>
    <div data-live="/approvals/table">${table}</div>
  `;
}
