import assert from "node:assert/strict";
import {
  fillFormArgs,
  findRef,
  hasPageView,
  parseRefs,
  percent,
  refArgName,
  replaceSection,
  roleOf,
  updatePicture,
} from "./task_bench.ts";
import {
  catalog,
  expectedSubmission,
  FORM_FIELDS,
  type FormField,
  SEARCH_QUERIES,
  searchCatalog,
  serveTaskSite,
  submissionMismatches,
} from "./task_site.ts";

// Shapes copied from real results of both servers (bench/task_bench.ts OMOTAI_TASK_DUMP).
const OMOTAI_PAGE = `navigated to http://127.0.0.1:4000/form

doc d2
<<<untrusted-page nonce=03262982dc9397f2 origin=http://127.0.0.1:4000>>>
path: /form
title: Apply · Acme Portal
[e1] link "Acme Portal" -> /
# Business account application
First name
[e10] textbox "First name"
[e24] combobox "Country" = "Choose…" options: "Choose…", "Portugal", "Spain"
[e35] radio "Contact by phone"
[e41] checkbox "I accept the terms" [checked]
- [e50] link "Say \\"hi\\"" -> /hi
[e44] button "Submit application"
<<<end-untrusted-page nonce=03262982dc9397f2>>>`;

const OMOTAI_DIFF = `typed 24 characters into e137 and pressed Enter

doc d8 · changes since your last view: 2 added, 5 removed, 1 changed
<<<untrusted-page nonce=03262982dc9397f2 origin=http://127.0.0.1:4000>>>
  # Product search
~ [e137] searchbox "Search products" = "brass desk lamp dimmable"
  [e138] button "Search"
- [e179] link
- - [e180] link
+ 1 results for brass desk lamp dimmable
+ - [e181] link "Brass desk lamp, dimmable" -> /product/5000
<<<end-untrusted-page nonce=03262982dc9397f2>>>`;

const PEER_SNAPSHOT = `### Page
- Page URL: http://127.0.0.1:4000/form
### Snapshot
\`\`\`yaml
- generic [active] [ref=f1e1]:
  - heading "Business account application" [level=1] [ref=f1e14]
  - paragraph [ref=f1e17]:
    - generic [ref=f1e18]:
      - text: First name
      - textbox "First name" [ref=f1e19]
  - combobox "Country" [ref=f1e61]:
    - option "Choose…" [selected]
  - radio "Contact by phone" [ref=f1e94]
  - checkbox "I accept the terms" [checked] [ref=f1e110]
  - link "Say \\"hi\\"" [ref=e7] [cursor=pointer]:
    - /url: /hi
  - button "Submit application" [ref=f1e117]
\`\`\``;

Deno.test("parseRefs() reads Omotai full pages, list items and escaped names", () => {
  const refs = parseRefs(OMOTAI_PAGE, "omotai");
  assert.deepEqual(refs.map((r) => r.ref), ["e1", "e10", "e24", "e35", "e41", "e50", "e44"]);
  assert.deepEqual(refs[2], { ref: "e24", role: "combobox", name: "Country" });
  assert.deepEqual(refs[5], { ref: "e50", role: "link", name: 'Say "hi"' });
  // "path:", headings and label text carry no ref.
  assert.ok(refs.every((r) => /^e\d+$/.test(r.ref)));
});

Deno.test("parseRefs() keeps changed, added and context lines of a diff, never removed ones", () => {
  const refs = parseRefs(OMOTAI_DIFF, "omotai");
  assert.deepEqual(refs, [
    { ref: "e137", role: "searchbox", name: "Search products" },
    { ref: "e138", role: "button", name: "Search" },
    { ref: "e181", role: "link", name: "Brass desk lamp, dimmable" },
  ]);
  // Outside a diff a "- " line is a list item, whose ref is live.
  assert.deepEqual(parseRefs('- [e9] link "Next"', "omotai"), [
    { ref: "e9", role: "link", name: "Next" },
  ]);
});

Deno.test("parseRefs() reads Playwright MCP lines with attributes and frame-prefixed refs", () => {
  const refs = parseRefs(PEER_SNAPSHOT, "peer");
  assert.deepEqual(refs.map((r) => `${r.role}:${r.ref}`), [
    "generic:f1e1",
    "heading:f1e14",
    "paragraph:f1e17",
    "generic:f1e18",
    "textbox:f1e19",
    "combobox:f1e61",
    "radio:f1e94",
    "checkbox:f1e110",
    "link:e7",
    "button:f1e117",
  ]);
  assert.equal(refs[8].name, 'Say "hi"');
  // Options and /url lines have no ref; Omotai's reader finds nothing in the peer's format.
  assert.equal(parseRefs(PEER_SNAPSHOT, "omotai").length, 0);
  assert.equal(parseRefs(OMOTAI_PAGE, "peer").length, 0);
});

Deno.test("findRef() matches role and exact name, and says what it missed", () => {
  assert.equal(findRef(OMOTAI_PAGE, "omotai", "button", "Submit application"), "e44");
  assert.equal(findRef(PEER_SNAPSHOT, "peer", "checkbox", "I accept the terms"), "f1e110");
  // A name is matched whole: "Submit" is not "Submit application".
  assert.throws(() => findRef(OMOTAI_PAGE, "omotai", "button", "Submit"), /no button "Submit"/);
  assert.throws(() => findRef(PEER_SNAPSHOT, "peer", "link", "First name"), /peer: no link/);
  assert.throws(() => findRef(OMOTAI_DIFF, "omotai", "link", ""), /no link ""/);
});

Deno.test("hasPageView() tells a result the agent can read the page in from one it cannot", () => {
  assert.equal(hasPageView(OMOTAI_PAGE, "omotai"), true);
  assert.equal(hasPageView(OMOTAI_DIFF, "omotai"), true);
  assert.equal(hasPageView("no changes since your last view (doc d3)", "omotai"), true);
  assert.equal(hasPageView("filled 30 field(s): 24 typed, 5 selected, 1 clicked", "omotai"), false);
  assert.equal(hasPageView(PEER_SNAPSHOT, "peer"), true);
  const linkOnly =
    "### Page\n- Page URL: http://x/\n### Snapshot\n- [Snapshot](.playwright-mcp/p.yml)";
  assert.equal(hasPageView(linkOnly, "peer"), false);
});

Deno.test("refArgName() adapts to the schema's element argument", () => {
  assert.equal(refArgName({ properties: { ref: {}, element: {} } }), "ref");
  assert.equal(refArgName({ properties: { target: {}, element: {} } }), "target");
  assert.throws(() => refArgName({ properties: { url: {} } }), /no ref or target/);
  assert.throws(() => refArgName(undefined), /no ref or target/);
});

Deno.test("fillFormArgs() builds one field per entry with each side's refs and key", () => {
  const wanted = ["First name", "Country", "Contact by phone", "I accept the terms"];
  const fields = wanted.map((l) => FORM_FIELDS.find((f) => f.label === l) as FormField);
  const ours = fillFormArgs(fields, OMOTAI_PAGE, "omotai", "ref");
  assert.deepEqual(ours.fields, [
    { name: "First name", type: "textbox", ref: "e10", value: "Marta" },
    { name: "Country", type: "combobox", ref: "e24", value: "Portugal" },
    // A radio is filled by checking the option its label names.
    { name: "Contact by phone", type: "radio", ref: "e35", value: "true" },
    { name: "I accept the terms", type: "checkbox", ref: "e41", value: "true" },
  ]);
  const peer = fillFormArgs(fields, PEER_SNAPSHOT, "peer", "target");
  assert.deepEqual(peer.fields.map((f) => f.target), ["f1e19", "f1e61", "f1e94", "f1e110"]);
  assert.ok(peer.fields.every((f) => !("ref" in f)));
  assert.throws(() => fillFormArgs(FORM_FIELDS, OMOTAI_PAGE, "omotai", "ref"), /no textbox/);
});

Deno.test("roleOf() maps every control of the form to a fill_form type", () => {
  const roles = new Set(FORM_FIELDS.map(roleOf));
  assert.deepEqual([...roles].sort(), ["checkbox", "combobox", "radio", "textbox"]);
  assert.equal(FORM_FIELDS.length, 30);
  assert.equal(new Set(FORM_FIELDS.map((f) => f.label)).size, 30, "labels must be unique");
});

Deno.test("replaceSection() replaces only its section, or appends it", () => {
  const doc =
    "## A\n\none\n\n## Multi-step tasks (old)\n\nstale\n### sub\nstale too\n\n## C\n\nthree\n";
  const out = replaceSection(doc, "Multi-step tasks", "## Multi-step tasks (new)\n\nfresh\n");
  assert.equal(out, "## A\n\none\n\n## Multi-step tasks (new)\n\nfresh\n\n## C\n\nthree\n");
  // As the last section it runs to the end of the file.
  const last = replaceSection(
    "## A\n\none\n\n## Multi-step tasks\nold\n",
    "Multi-step tasks",
    "## Multi-step tasks\nnew",
  );
  assert.equal(last, "## A\n\none\n\n## Multi-step tasks\nnew\n");
  assert.equal(
    replaceSection("## A\n\none\n", "Multi-step tasks", "## M\nx\n"),
    "## A\n\none\n\n## M\nx\n",
  );
  assert.equal(replaceSection("## A\none", "X", "## X\n"), "## A\none\n\n## X\n");
  assert.equal(percent(1, 4), "25.0%");
});

Deno.test("the search refinements narrow the results as the task asserts", () => {
  const counts = SEARCH_QUERIES.map((q) => searchCatalog(q).length);
  assert.deepEqual(counts, [60, 12, 2, 1]);
  assert.equal(catalog().length, 360);
  assert.equal(searchCatalog("brass desk lamp dimmable")[0].title, "Brass desk lamp, dimmable");
  // Words match whole words of the title: "lam" finds nothing.
  assert.equal(searchCatalog("lam").length, 0);
});

Deno.test("the form page has every field, and the site checks what it receives", async () => {
  await using site = serveTaskSite();
  const html = await (await fetch(`${site.origin}/form`)).text();
  for (const f of FORM_FIELDS) {
    assert.match(html, new RegExp(`name="${f.name}"`), f.name);
    assert.ok(html.includes(f.label), f.label);
  }
  const good = new URLSearchParams([...expectedSubmission()]);
  const res = await fetch(`${site.origin}/form`, { method: "POST", body: good });
  assert.match(await res.text(), /Application received/);
  assert.equal(site.formPosts.length, 1);
  assert.deepEqual(submissionMismatches(site.formPosts[0]), []);
  const bad = new URLSearchParams(good);
  bad.set("city", "Porto");
  bad.append("sms", "on");
  bad.delete("terms");
  assert.deepEqual(submissionMismatches(bad), [
    'city: want "Lisboa", got ["Porto"]',
    'terms: want "on", got []',
    'sms: unexpected ["on"]',
  ]);
  const del = await fetch(`${site.origin}/orders/delete`, { method: "POST", body: "4471" });
  await del.body?.cancel();
  assert.deepEqual(site.deletes, ["4471"]);
});

Deno.test("updatePicture() follows folds, diffs and collapsed removals of Omotai views", () => {
  const open = "<<<untrusted-page nonce=n origin=http://x>>>";
  const close = "<<<end-untrusted-page nonce=n>>>";
  const first = [
    "doc d1 · tab 0 of 1",
    open,
    '[e1] link "Home" -> /',
    '[e2] link "Next page" -> /t',
    '- [e3] link "Oak lamp" -> /p/1',
    '- [e4] link "Elm lamp" -> /p/2',
    '- [e5] link "Ash lamp" -> /p/3',
    close,
  ].join("\n");
  let p = updatePicture(new Map(), first, "omotai");
  assert.deepEqual([...p.keys()], ["e1", "e2", "e3", "e4", "e5"]);
  const diff = [
    "doc d1 · tab 0 of 1 · changes since your last view: 1 added, 3 removed",
    open,
    "- <<<2 lines gone: e3, e4>>>",
    "- [e5] link",
    '+ - [e6] link "Fir lamp" -> /p/4',
    close,
  ].join("\n");
  p = updatePicture(p, diff, "omotai");
  assert.deepEqual([...p.keys()].sort(), ["e1", "e2", "e6"]);
  const folded = ["doc d2 · tab 0 of 1", open, "<<<2 lines as before: e1, e2>>>", "# New", close]
    .join("\n");
  p = updatePicture(p, folded, "omotai");
  assert.deepEqual([...p.keys()], ["e1", "e2"], "a new page keeps only what its folds name");
  assert.equal(p.get("e2")?.name, "Next page");
  assert.deepEqual([...updatePicture(p, "clicked e2", "omotai").keys()], ["e1", "e2"]);
});
