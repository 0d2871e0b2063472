/**
 * The sessions view: each live agent session with its current origin, actions used, taint
 * and isolation, and a Kill button.
 *
 * @module
 */
import { postButton, seg, when } from "../format.ts";
import { html, type SafeHtml } from "../html.ts";
import type { SessionInfo } from "../ports.ts";

/** The sessions page body. */
export function sessionsBody(sessions: readonly SessionInfo[], csrf: string): SafeHtml {
  if (sessions.length === 0) return html`<p class="empty">No agent is connected.</p>`;
  return html`
    <table>
      <thead>
        <tr>
          <th>Session</th>
          <th>Agent</th>
          <th>Current origin</th>
          <th>Actions used</th>
          <th>Tainted</th>
          <th>Isolation</th>
          <th>Started</th>
          <th></th>
        </tr>
      </thead>
      <tbody>${sessions.map((s) =>
        html`
          <tr>
            <td class="mono">${s.id}</td>
            <td>${s.agent ?? "—"}</td>
            <td>${s.origin ?? "—"}</td>
            <td>${s.actionsUsed}</td>
            <td class="${s.tainted ? "bad" : ""}">${s.tainted ? "yes" : "no"}</td>
            <td class="${s.isolation === "netns" ? "" : "bad"}">${s.isolation}</td>
            <td>${when(s.startedAt)}</td>
            <td>${postButton(`/sessions/${seg(s.id)}/kill`, "Kill", csrf, {}, "danger")}</td>
          </tr>
        `
      )}</tbody>
    </table>
  `;
}
