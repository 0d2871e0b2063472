/**
 * A page's form method and action as the facts, the policy and the audit see them: what the
 * browser submits (the reflected `formMethod` / `formAction`), never the page's raw attribute.
 * A submit button's `formmethod` set by script to text with a NUL or a lone surrogate once
 * reached the audit row's `method` as is: PostgreSQL refused the row, and with it every row
 * batched beside it (other sessions' actions denied), and SQLite stored it cut short so its own
 * verify called the chain tampered.
 */
import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { verifyAudit } from "../runtime/store/sqlite_audit_store.ts";
import { databasePath, openDatabase } from "../runtime/store/database.ts";
import { html, serveTwoOrigins } from "./fixtures/two_origins.ts";
import { refOf, startHarness } from "./helpers/harness.ts";

/** A form whose submit buttons' formmethod / formaction the page sets to hostile text. */
function serveSite() {
  return serveTwoOrigins((_origin, other) => ({
    "/": () =>
      html(
        `<h1>Order</h1>
<form action="/done" method="post">
  <input name="q" value="x">
  <button id="nul">Send with NUL</button>
  <button id="surrogate">Send with surrogate</button>
  <button id="spaced">Send elsewhere</button>
</form>
<script>
  document.getElementById("nul").setAttribute("formmethod", "POST\\u0000");
  document.getElementById("surrogate").setAttribute("formmethod", "dialog\\ud800");
  const spaced = document.getElementById("spaced");
  spaced.setAttribute("formmethod", "\\u0000post");
  spaced.setAttribute("formaction", " \\t${other}/done?via=spaced\\u0000 ");
</script>`,
        "Order",
      ),
    "/done": (req) => html(`<h1>Done</h1><p>${req.method}</p>`, "Done"),
  }));
}

Deno.test("a submit button's hostile formmethod is judged, audited and sent as the browser submits it (GET), and the audit verifies", async () => {
  await using site = serveSite();
  await using h = await startHarness(() =>
    `allowed_origins: [${site.origin}, ${site.otherOrigin}]\nread_only: false\n`
  );
  await using c = await h.connect();
  for (
    const [name, button] of [
      ["nul", /\[(e\d+)\] button "Send with NUL"/],
      ["surrogate", /\[(e\d+)\] button "Send with surrogate"/],
      ["spaced", /\[(e\d+)\] button "Send elsewhere"/],
    ] as const
  ) {
    const nav = await c.call("browser_navigate", { url: `${site.origin}/` });
    assert.equal(nav.isError, false, nav.text.slice(0, 1_000));
    const click = await c.call("browser_click", { ref: refOf(nav.text, button) });
    assert.equal(click.isError, false, `${name}: ${click.text.slice(0, 1_000)}`);
  }
  // An invalid formmethod is the GET state: every submission went out as a GET, the last to
  // the other origin, whose address the browser trimmed as the URL parser does.
  assert.deepEqual(site.hits.filter((x) => x.includes("/done")).map((x) => x.split("?")[0]), [
    "GET /done",
    "GET /done",
    "GET /done",
  ]);
  assert.equal(site.posts.size, 0);
  const db = new DatabaseSync(databasePath(h.dataDir), { readOnly: true });
  try {
    const clicks = db.prepare(
      "SELECT method, origin, decision FROM audit WHERE kind = 'click' ORDER BY seq",
    ).all() as { method: string | null; origin: string | null; decision: string }[];
    assert.deepEqual(clicks.map((r) => [r.method, r.decision]), [
      ["GET", "allow"],
      ["GET", "allow"],
      ["GET", "allow"],
    ]);
    assert.equal(clicks[2].origin, site.otherOrigin);
  } finally {
    db.close();
  }
  const audit = openDatabase(databasePath(h.dataDir));
  try {
    const v = verifyAudit(audit);
    assert.deepEqual(v.problems, []);
  } finally {
    audit.close();
  }
});
