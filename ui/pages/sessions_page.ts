/**
 * The sessions view: each live agent session with its current origin (and what the runtime
 * is doing for it, a capture's step), actions used, taint and isolation, and a Kill button.
 *
 * @module
 */
import { postButton, seg, when } from "../format.ts";
import { html, type SafeHtml } from "../html.ts";
import type { Capacity, SessionInfo } from "../ports.ts";

/** The sessions page body; with `capacity`, this runtime's use of its session cap first. */
export function sessionsBody(
  sessions: readonly SessionInfo[],
  csrf: string,
  capacity?: Capacity,
): SafeHtml {
  const use = capacity
    ? html`<p class="capacity">${capacity.open} of ${
      capacity.max ?? "unlimited"
    } sessions on this runtime${
      capacity.max !== null && capacity.open >= capacity.max
        ? " (full: new sessions are refused with SERVER_BUSY)"
        : ""
    }${
      capacity.agentShare !== null
        ? html`; one agent holds at most ${capacity.agentShare} (AGENT_BUSY past it) unless its policy's max_sessions says otherwise`
        : ""
    }</p>`
    : html``;
  if (sessions.length === 0) return html`${use}<p class="empty">No agent is connected.</p>`;
  return html`
    ${use}
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
            <td class="mono">${s.id}${s.runtime
              ? html`<br><small>${s.runtime}${s.gone ? " (gone)" : ""}</small>`
              : ""}</td>
            <td>${s.agent ?? "—"}</td>
            <td>${s.origin ?? "—"}${s.activity
              ? html`<br><small class="activity">${s.activity}</small>`
              : ""}</td>
            <td>${s.actionsUsed}</td>
            <td class="${s.tainted ? "bad" : ""}">${s.tainted ? "yes" : "no"}</td>
            <td class="${s.isolation === "netns" && s.cgroup !== "none" ? "" : "bad"}">${s
              .isolation}${s.cgroup ? `, ${s.cgroup}` : ""}</td>
            <td>${when(s.startedAt)}</td>
            <td>${postButton(`/sessions/${seg(s.id)}/kill`, "Kill", csrf, {}, "danger")}</td>
          </tr>
        `
      )}</tbody>
    </table>
  `;
}
