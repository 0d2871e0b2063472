import { holdsPiece, PLANTED_PW, plantedRedactor } from "../../tests/helpers/planted_secret.ts";
import assert from "node:assert/strict";
import { ax, axFrame as frame } from "../../tests/helpers/ax_tree.ts";
import { buildAxOutline } from "./ax_outline.ts";

Deno.test("buildAxOutline() shows headings, text and controls with refs", () => {
  const pw = ax("textbox", "Pass", [], { value: { type: "string", value: "•••••••" } });
  const tree = ax("RootWebArea", "Title", [
    ax("heading", "Welcome", [ax("StaticText", "Welcome")], { props: { level: 1 } }),
    ax("paragraph", "", [
      ax("StaticText", "Some text "),
      ax("link", "Next", [ax("StaticText", "Next")], {
        props: { url: "http://127.0.0.1:8000/next?token=abc" },
      }),
    ]),
    ax("textbox", "User", [], { value: { type: "string", value: "bob" } }),
    pw,
    ax("checkbox", "Remember", [], { props: { checked: "true" } }),
    ax("combobox", "Size", [
      ax("MenuListPopup", "", [
        ax("option", "S"),
        ax("option", "M", [], { props: { selected: true } }),
      ]),
    ], { value: { type: "string", value: "M" } }),
    ax("button", "Go", [ax("StaticText", "Go")], { props: { disabled: true } }),
  ]);
  let n = 0;
  const { lines, stats } = buildAxOutline(
    frame(tree, { passwordFields: new Set([pw[0].backendDOMNodeId!]) }),
    () => `e${++n}`,
  );
  assert.deepEqual(lines, [
    "# Welcome",
    "Some text",
    '[e1] "Next" -> /next',
    '[e2] textbox "User" = "bob"',
    '[e3] password "Pass"',
    '[e4] checkbox "Remember" [checked]',
    '[e5] combobox "Size" = "M" options: "S", "M"',
    '[e6] button "Go" [disabled]',
  ]);
  assert.equal(stats.interactive, 6);
  assert.ok(!lines.join("\n").includes("•"));
  assert.ok(!lines.join("\n").includes("token=abc"));
});

Deno.test("buildAxOutline() skips ignored subtrees' own node but keeps their children", () => {
  const tree = ax("RootWebArea", "", [
    ax("generic", "", [ax("StaticText", "kept")], { ignored: true }),
    ax("listitem", "", [ax("StaticText", "item")]),
  ]);
  const { lines } = buildAxOutline(frame(tree), () => "e1");
  assert.deepEqual(lines, ["kept", "- item"]);
});

Deno.test("buildAxOutline() splices child frames at their owner iframe", () => {
  const child = frame(ax("RootWebArea", "", [ax("button", "Inner")]), {
    key: "C",
    url: "http://127.0.0.2:9000/frame",
  });
  const iframe = ax("Iframe", "");
  const root = frame(
    ax("RootWebArea", "", [ax("StaticText", "before"), iframe, ax("StaticText", "after")]),
    {
      childFrames: new Map([[iframe[0].backendDOMNodeId!, child]]),
    },
  );
  const seen: string[] = [];
  const { lines, stats } = buildAxOutline(root, (f) => {
    seen.push(f.key);
    return "e9";
  });
  assert.deepEqual(lines, [
    "before",
    "[frame http://127.0.0.2:9000/frame]",
    '[e9] button "Inner"',
    "[/frame]",
    "after",
  ]);
  assert.deepEqual(seen, ["C"]);
  assert.equal(stats.frames, 2);
});

Deno.test("buildAxOutline() redacts names, values and text before it cuts or splits them", () => {
  const redactor = plantedRedactor();
  const at = (n: number) => `${"o".repeat(n)}${PLANTED_PW} tail`;
  const tree = ax("RootWebArea", "", [
    // The name cut (120) would leave 21 characters of it, the value cut 5, the brief 11,
    // the line split at 1,000 characters 5.
    ax("link", at(98), [], { props: { url: `http://${PLANTED_PW}.test/` } }),
    ax("textbox", "F", [], { value: { type: "string", value: at(114) } }),
    ax("paragraph", "", [ax("StaticText", at(8))]),
    ax("paragraph", "", [ax("StaticText", at(995))]),
  ]);
  const { lines, brief } = buildAxOutline(frame(tree), () => "e1", { redactor });
  for (const line of [...lines, ...brief]) assert.ok(!holdsPiece(line), line);
  assert.match(lines[0], /-> http:\/\/\[redacted\]\.test$/, "the host, lower-cased by the URL");
  assert.ok(lines.includes(`${"o".repeat(8)}[redacted] tail`), lines.join("\n"));
});
