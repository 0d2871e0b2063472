import assert from "node:assert/strict";
import { escapeHtml, html, SafeHtml } from "./html.ts";

Deno.test("escapeHtml() escapes the five characters that end text or an attribute", () => {
  assert.equal(
    escapeHtml(`<a href="x" onclick='y'>&amp;</a>`),
    "&lt;a href=&quot;x&quot; onclick=&#39;y&#39;&gt;&amp;amp;&lt;/a&gt;",
  );
});

Deno.test("html() escapes values, keeps nested SafeHtml, joins lists, drops null and false", () => {
  const name = "<img src=x onerror=alert(1)>";
  const cell = html`<td title="${name}">${name}</td>`;
  assert.equal(
    cell.value,
    '<td title="&lt;img src=x onerror=alert(1)&gt;">&lt;img src=x onerror=alert(1)&gt;</td>',
  );
  const row = html`<tr>${[cell, "<b>"]}${null}${undefined}${false}${0}</tr>`;
  assert.ok(row instanceof SafeHtml);
  assert.equal(row.value, `<tr>${cell.value}&lt;b&gt;0</tr>`);
  assert.equal(String(row), row.value);
});
