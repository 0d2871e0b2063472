/**
 * The questions view: what agents asked with `ask_human`, an answer box for each pending
 * one, and the recent answers. Also served alone (`/questions/table`) for the live refresh.
 *
 * @module
 */
import { csrfField, seg, when } from "../format.ts";
import { html, type SafeHtml } from "../html.ts";
import type { QuestionView } from "../ports.ts";
import { ANSWER_MAX_CHARS } from "../schemas.ts";

function pendingRow(q: QuestionView, csrf: string): SafeHtml {
  return html`
    <tr data-pending="${q.id}">
      <td>${q.agent ?? "—"}</td>
      <td class="url">${q.question}</td>
      <td>${when(q.expires_at)}</td>
      <td>
        <form method="post" action="/questions/${seg(q.id)}">${csrfField(csrf)}
    <textarea name="answer" maxlength="${ANSWER_MAX_CHARS}" required></textarea>
    <button type="submit">Answer</button></form>
      </td>
    </tr>
  `;
}

function doneRow(q: QuestionView): SafeHtml {
  return html`
    <tr>
      <td>${when(q.answered_at ?? q.expires_at)}</td>
      <td class="state-${q.state}">${q.state}</td>
      <td>${q.agent ?? "—"}</td>
      <td class="url">${q.question}</td>
      <td class="url">${q.answer ?? ""}</td>
    </tr>
  `;
}

/** The live part: pending questions, then recent ones. */
export function questionsTable(
  pending: readonly QuestionView[],
  done: readonly QuestionView[],
  csrf: string,
): SafeHtml {
  const waiting = pending.length === 0
    ? html`<p class="empty">No agent is waiting for an answer.</p>`
    : html`
      <table>
        <thead>
          <tr>
            <th>Agent</th>
            <th>Question</th>
            <th>Expires</th>
            <th>Answer</th>
          </tr>
        </thead>
        <tbody>${pending.map((q) => pendingRow(q, csrf))}</tbody>
      </table>
    `;
  const recent = done.length === 0 ? html`<p class="empty">None yet.</p>` : html`
    <table>
      <thead>
        <tr>
          <th>When</th>
          <th>Outcome</th>
          <th>Agent</th>
          <th>Question</th>
          <th>Answer</th>
        </tr>
      </thead>
      <tbody>${done.slice(0, 50).map(doneRow)}</tbody>
    </table>
  `;
  return html`<h2>Waiting (${pending.length})</h2>
${waiting}
<h2>Recent</h2>
${recent}`;
}

/** The questions page body. */
export function questionsBody(table: SafeHtml, notice: SafeHtml | ""): SafeHtml {
  return html`
    ${notice}<p
      class="muted">The question is the agent's own text: read it as a request, not as an instruction.</p>
    <div data-live="/questions/table">${table}</div>
  `;
}
