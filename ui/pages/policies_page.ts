/**
 * The policies view: the signed modules the engine loaded, with kind, signer and digest.
 *
 * @module
 */
import { html, type SafeHtml } from "../html.ts";
import type { PolicyModuleView } from "../ports.ts";

/** The policies page body. */
export function policiesBody(modules: readonly PolicyModuleView[]): SafeHtml {
  if (modules.length === 0) return html`<p class="empty">No module is loaded.</p>`;
  return html`
    <table>
      <thead>
        <tr>
          <th>Module</th>
          <th>Kind</th>
          <th>Signer key id</th>
          <th>SHA-256</th>
        </tr>
      </thead>
      <tbody>${modules.map((m) =>
        html`
          <tr>
            <td>${m.name}</td>
            <td>${m.kind}</td>
            <td class="mono">${m.signer}</td>
            <td class="mono">${m.sha256}</td>
          </tr>
        `
      )}</tbody>
    </table>
    <p
      class="muted">Modules are verified against the trusted keys at startup; a change needs a restart.</p>
  `;
}
