/**
 * The two outline walks write one vocabulary: the same page, given as the accessibility
 * tree Chromium reports for it and as its DOM snapshot, reads the same, line for line and
 * in its overview form.
 */
import assert from "node:assert/strict";
import { ax, axFrame } from "../../tests/helpers/ax_tree.ts";
import { domPage } from "../../tests/helpers/dom_snapshot.ts";
import { buildAxOutline } from "./ax_outline.ts";
import { buildDomOutline } from "./dom_outline.ts";

const text = (s: string) => ax("StaticText", s);

/** The page as `Accessibility.getFullAXTree` gives it. */
function axPage() {
  const pw = ax("textbox", "Pass");
  const tree = ax("RootWebArea", "Parity", [
    ax("heading", "Welcome", [text("Welcome")], { props: { level: 1 } }),
    ax("paragraph", "", [
      text("Some text "),
      ax("link", "Next", [text("Next")], { props: { url: "http://127.0.0.1:8000/next?q=1" } }),
    ]),
    ax("list", "", [
      ax("listitem", "", [text("First item")]),
      ax("listitem", "", [
        ax("link", "Elsewhere", [text("Elsewhere")], {
          props: { url: "http://127.0.0.2:9000/x/y" },
        }),
      ]),
    ]),
    ax("heading", "Sign in", [text("Sign in")], { props: { level: 2 } }),
    ax("textbox", "User", [], { value: { type: "string", value: "bob" } }),
    pw,
    ax("checkbox", "Remember", [], { props: { checked: "true" } }),
    ax("combobox", "Size", [
      ax("MenuListPopup", "", [
        ax("option", "S"),
        ax("option", "M", [], { props: { selected: true } }),
      ]),
    ], { value: { type: "string", value: "M" } }),
    ax("button", "Menu", [text("Menu")], { props: { expanded: true } }),
    ax("button", "Go", [text("Go")], { props: { disabled: true } }),
  ]);
  return axFrame(tree, { passwordFields: new Set([pw[0].backendDOMNodeId!]) });
}

/** The same page as `DOMSnapshot.captureSnapshot` gives it. */
function snapshotPage() {
  return domPage([
    { tag: "H1", kids: ["Welcome"] },
    { tag: "P", kids: ["Some text ", { tag: "A", attrs: { href: "/next?q=1" }, kids: ["Next"] }] },
    {
      tag: "UL",
      kids: [
        { tag: "LI", kids: ["First item"] },
        {
          tag: "LI",
          kids: [{ tag: "A", attrs: { href: "http://127.0.0.2:9000/x/y" }, kids: ["Elsewhere"] }],
        },
      ],
    },
    { tag: "H2", kids: ["Sign in"] },
    { tag: "INPUT", attrs: { "aria-label": "User" }, inputValue: "bob" },
    { tag: "INPUT", attrs: { type: "password", "aria-label": "Pass" }, inputValue: "hunter2" },
    {
      tag: "LABEL",
      kids: [{ tag: "INPUT", attrs: { type: "checkbox" }, checked: true }, "Remember"],
    },
    {
      tag: "SELECT",
      attrs: { "aria-label": "Size" },
      kids: [{ tag: "OPTION", kids: ["S"] }, { tag: "OPTION", kids: ["M"], selected: true }],
    },
    { tag: "BUTTON", attrs: { "aria-expanded": "true" }, kids: ["Menu"] },
    { tag: "BUTTON", attrs: { disabled: "" }, kids: ["Go"] },
  ]);
}

Deno.test("buildAxOutline() and buildDomOutline() write the same lines for the same page", () => {
  let a = 0;
  let d = 0;
  const fromAx = buildAxOutline(axPage(), () => `e${++a}`);
  const fromDom = buildDomOutline(snapshotPage(), () => `e${++d}`);
  assert.deepEqual(fromDom.lines, fromAx.lines);
  assert.deepEqual(fromDom.brief, fromAx.brief);
  assert.deepEqual(fromDom.stats, fromAx.stats);
  assert.deepEqual(fromAx.lines, [
    "# Welcome",
    "Some text",
    '[e1] "Next" -> /next',
    "- First item",
    '- [e2] "Elsewhere" -> http://127.0.0.2:9000/x/y',
    "## Sign in",
    '[e3] textbox "User" = "bob"',
    '[e4] password "Pass"',
    '[e5] checkbox "Remember" [checked]',
    '[e6] combobox "Size" = "M" options: "S", "M"',
    '[e7] button "Menu" [expanded]',
    '[e8] button "Go" [disabled]',
  ]);
  assert.equal(fromAx.brief[4], '- [e2] "Elsewhere" -> http://127.0.0.2:9000');
});
