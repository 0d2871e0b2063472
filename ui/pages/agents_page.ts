/**
 * The agents view: the agents with a key, a form to add one, Remove buttons, and the page
 * that shows a new key: once, never again.
 *
 * @module
 */
import { csrfField, postButton, when } from "../format.ts";
import { html, type SafeHtml } from "../html.ts";
import type { AgentView } from "../ports.ts";

/** The agents page body. */
export function agentsBody(agents: readonly AgentView[], csrf: string): SafeHtml {
  const table = agents.length === 0 ? html`<p class="empty">No agent has a key yet.</p>` : html`
    <table>
      <thead>
        <tr>
          <th>Agent</th>
          <th>Policy</th>
          <th>Added</th>
          <th></th>
        </tr>
      </thead>
      <tbody>${agents.map((a) =>
        html`
          <tr>
            <td>${a.name}</td>
            <td class="mono">${a.policy ?? html`<span class="muted">runtime policy</span>`}</td>
            <td>${when(a.createdAt)}</td>
            <td>${postButton("/agents/remove", "Remove", csrf, { name: a.name }, "danger")}</td>
          </tr>
        `
      )}</tbody>
    </table>
  `;
  return html`<form method="post" action="/agents" class="row">${csrfField(csrf)}
<label>Name <input name="name" placeholder="ci-bot" required maxlength="64"></label>
<label>Policy file (optional) <input name="policy" placeholder="/etc/omotai/ci-bot.yaml" maxlength="500"></label>
<button type="submit">Add agent</button>
</form>
<p class="muted">Removing an agent refuses its key at once and closes its connections.</p>
${table}`;
}

/** The page body after adding an agent: its key, shown this one time. */
export function newKeyBody(name: string, key: string): SafeHtml {
  return html`<p>Agent <strong>${name}</strong> was added. Its key is shown <strong>once</strong>: copy it into the agent's MCP client configuration now (<code>Authorization: Bearer &lt;key&gt;</code>).</p>
<p><code class="key">${key}</code></p>
<p><a href="/agents">Back to the agents</a></p>`;
}
