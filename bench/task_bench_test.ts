import assert from "node:assert/strict";
import { CORPUS_DIR } from "./corpus.ts";
import {
  chargedStyle,
  CHEAPEST_BOUNDS,
  fillFormArgs,
  findArgs,
  findRef,
  flatText,
  hasPageView,
  ISSUE_TASKS,
  issueTargetLine,
  issueVerdict,
  matches,
  pageUrlOf,
  parseRefs,
  peerSelector,
  percent,
  refArgName,
  replaceSection,
  roleOf,
  SNAPSHOT_BOUNDS,
  snapshotFileOf,
  STYLES_OF,
  takes,
  updatePicture,
  wantsOverview,
} from "./task_bench.ts";
import {
  catalog,
  elementSpan,
  euros,
  expectedSubmission,
  FORM_FIELDS,
  type FormField,
  NEWS_CORPUS_PAGE,
  NEWS_FOLLOW_UP,
  NEWS_SENTENCES,
  newsArticle,
  REVIEWS_STEP,
  rewriteBodyLink,
  SEARCH_QUERIES,
  searchCatalog,
  serveTaskSite,
  SHOP_BRAND,
  SHOP_PAGE_SIZE,
  SHOP_QUERY,
  shopCatalog,
  shopFacet,
  shopHref,
  shopPage,
  shopQueryOf,
  shopResults,
  submissionMismatches,
  titleMatches,
  WIDGET_FAQ,
  WIDGET_QUESTION,
  WIDGET_SPEC,
  WIDGET_SPECS,
  widgetReviews,
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

Deno.test("titleMatches() wants every query word as a whole word of the title", () => {
  assert.equal(titleMatches("Brass desk lamp, dimmable", "lamp DIMMABLE"), true);
  assert.equal(titleMatches("Brass desk lamp, dimmable", "lam"), false);
  assert.equal(titleMatches("Arc lamp in brass", ""), true, "an empty query matches all");
});

Deno.test("shopCatalog() is deterministic, unique by title and id, mostly in stock", () => {
  const all = shopCatalog();
  assert.equal(all.length, 240);
  assert.deepEqual(all, shopCatalog());
  assert.equal(new Set(all.map((p) => p.title)).size, all.length);
  assert.equal(new Set(all.map((p) => p.id)).size, all.length);
  // Some products are out of stock, most are not.
  const inStock = all.filter((p) => p.inStock).length;
  assert.ok(inStock > all.length * 0.7 && inStock < all.length, String(inStock));
  assert.equal(euros(4995), "€49.95");
  assert.equal(euros(1900), "€19.00");
});

Deno.test("shopResults() and shopPage() give the shop task two pages after its filter", () => {
  const lamps = shopResults({ q: SHOP_QUERY });
  assert.equal(lamps.length, 40);
  const filtered = shopResults({ q: SHOP_QUERY, brand: SHOP_BRAND });
  assert.equal(filtered.length, 16);
  assert.ok(filtered.every((p) => p.brand === SHOP_BRAND && titleMatches(p.title, SHOP_QUERY)));
  const page2 = shopPage({ q: SHOP_QUERY, brand: SHOP_BRAND, page: 2 });
  assert.deepEqual(page2, filtered.slice(SHOP_PAGE_SIZE));
  assert.equal(page2.length, 6);
  // Page 2 holds products of the unfiltered search too: the task's check that none of those
  // is still in view means something.
  const others = lamps.filter((p) => p.brand !== SHOP_BRAND);
  assert.ok(others.length > SHOP_PAGE_SIZE);
  // Filters combine; the sort orders and keeps the set.
  const cheap = shopResults({ q: SHOP_QUERY, brand: SHOP_BRAND, price: "0-50", stock: true });
  assert.ok(cheap.every((p) => p.cents < 5_000 && p.inStock));
  const byPrice = shopResults({ q: SHOP_QUERY, sort: "price-asc" });
  assert.deepEqual(byPrice.map((p) => p.id).sort(), lamps.map((p) => p.id).sort());
  assert.ok(byPrice.every((p, i) => i === 0 || byPrice[i - 1].cents <= p.cents));
});

Deno.test("shopFacet() counts each value with the facet's own filter dropped", () => {
  const brands = shopFacet({ q: SHOP_QUERY, brand: SHOP_BRAND }, "brand");
  assert.deepEqual([...brands], [["Lumen", 16], ["Nordhaus", 16], ["Casa Alta", 8]]);
  const categories = shopFacet({ q: SHOP_QUERY, brand: SHOP_BRAND }, "category");
  assert.deepEqual([...categories], [["Lighting", 16]]);
  assert.equal(shopFacet({ q: "" }, "category").size, 6);
});

Deno.test("shopQueryOf() and shopHref() round-trip a shop URL", () => {
  const q = shopQueryOf(new URLSearchParams("q=lamp&brand=Casa+Alta&stock=1&page=2"));
  assert.deepEqual(q, {
    q: "lamp",
    category: undefined,
    brand: "Casa Alta",
    price: undefined,
    stock: true,
    sort: undefined,
    page: 2,
  });
  assert.equal(shopHref(q), "/shop?q=lamp&brand=Casa+Alta&stock=1&page=2");
  assert.equal(shopHref({ q: "", page: 1 }), "/shop");
  assert.equal(shopHref({ q: "x", sort: "relevance", page: 1 }), "/shop?q=x");
  assert.equal(shopQueryOf(new URLSearchParams("page=-3")).page, 1);
  assert.equal(shopQueryOf(new URLSearchParams("page=abc")).page, 1);
});

Deno.test("widgetReviews() has three loads of reviews, each author unique", () => {
  const reviews = widgetReviews();
  assert.equal(reviews.length, 3 * REVIEWS_STEP);
  assert.equal(new Set(reviews.map((r) => r.author)).size, reviews.length);
  // No author's name holds another's: "seen" checks by substring.
  for (const a of reviews) {
    assert.equal(reviews.filter((b) => b.author.includes(a.author)).length, 1, a.author);
  }
  assert.ok(WIDGET_SPECS.some(([k]) => k === WIDGET_SPEC));
  assert.ok(WIDGET_FAQ.some(([q]) => q === WIDGET_QUESTION));
});

Deno.test("elementSpan() finds an element's end past nested elements of its tag", () => {
  const html = '<div id="a"><div class="body"><div><p>x</p></div><p>y</p></div><p>z</p></div>';
  const span = elementSpan(html, 'class="body"');
  assert.ok(span);
  assert.equal(
    html.slice(span.start, span.end),
    '<div class="body"><div><p>x</p></div><p>y</p></div>',
  );
  assert.equal(elementSpan(html, "nowhere"), undefined);
  assert.equal(elementSpan('<div class="body"><p>never closed', 'class="body"'), undefined);
});

Deno.test("rewriteBodyLink() points the first body link of its own name elsewhere", () => {
  const html = '<a href="/x">Tag</a><div itemprop="articleBody">' +
    '<p><a href="#img">pic</a> see <a class="t" href="https://a.test/1">Tag</a> and ' +
    '<a href="https://b.test/2"><em>the</em>  report</a>.</p></div><a href="/y">Tag</a>';
  const out = rewriteBodyLink(html, 'itemprop="articleBody"', "/follow");
  // "#img" stays on the page and "Tag" names three links: the report is the one.
  assert.equal(out.linkText, "the report");
  assert.equal(out.was, "https://b.test/2");
  assert.equal(out.html, html.replace('href="https://b.test/2"', 'href="/follow"'));
  assert.throws(() => rewriteBodyLink(html, "id=nowhere", "/f"), /no element/);
  assert.throws(
    () => rewriteBodyLink('<div id="b"><a href="#x">a</a></div>', 'id="b"', "/f"),
    /no link of its own name/,
  );
});

// The corpus lives beside the repository (bench/corpus.ts); a checkout without it skips the
// tests that read it rather than failing on a missing file.
const HAS_CORPUS = (() => {
  try {
    Deno.statSync(`${CORPUS_DIR}/${NEWS_CORPUS_PAGE}/index.html`);
    return true;
  } catch {
    return false;
  }
})();

Deno.test({
  name: "newsArticle() rewrites one link of guardian-1 and keeps the checked sentences",
  ignore: !HAS_CORPUS,
  fn: () => {
    const { html, linkText, was } = newsArticle();
    assert.equal(linkText, "scientists think");
    assert.match(was, /^https:\/\/www\.radionz\.co\.nz\//);
    assert.equal(html.split(`href="${NEWS_FOLLOW_UP}"`).length, 2, "exactly one link rewritten");
    const flat = flatText(html);
    for (const t of NEWS_SENTENCES) assert.ok(flat.includes(t), t);
    assert.equal(flatText("a\n  b\tc"), "a b c");
  },
});

Deno.test("serveTaskSite() serves the shop, the product page and the news pages", async () => {
  await using site = serveTaskSite();
  const get = async (path: string) => await (await fetch(site.origin + path)).text();
  const shop = await get(shopHref({ q: SHOP_QUERY, brand: SHOP_BRAND, page: 2 }));
  assert.ok(shop.includes("Showing 11–16 of 16 results"));
  for (const p of shopPage({ q: SHOP_QUERY, brand: SHOP_BRAND, page: 2 })) {
    assert.ok(shop.includes(`>${p.title}</a>`), p.title);
  }
  assert.ok(shop.includes(`>${SHOP_BRAND} (16)</a>`));
  assert.ok(shop.includes(">Previous page</a>") && !shop.includes(">Next page</a>"));
  const beyond = await fetch(`${site.origin}/shop?q=lamp&brand=Lumen&page=3`);
  assert.equal(beyond.status, 404);
  await beyond.body?.cancel();
  const product = await get("/product/halo-floor-lamp");
  assert.match(product, /role="tablist"/);
  assert.ok(product.includes("Load more reviews"));
  if (HAS_CORPUS) {
    const article = await get("/news/article");
    assert.ok(article.includes(`href="${NEWS_FOLLOW_UP}"`));
  }
  assert.match(await get(NEWS_FOLLOW_UP), /rangers had logged/);
});

Deno.test("issueVerdict() takes the geomean and the highest ratio of the issue's tasks", () => {
  const ratios = new Map([
    ["form", 0.2],
    ["find", 0.05],
    ["shop", 0.6],
    ["article", 0.2],
    ["widgets", 0.1],
    ["read", 0.9],
  ]);
  const v = issueVerdict(ratios);
  assert.ok(v);
  assert.equal(v.maxId, "shop");
  assert.equal(v.max, 0.6);
  assert.ok(Math.abs(v.geomean - Math.pow(0.2 * 0.05 * 0.6 * 0.2 * 0.1, 1 / 5)) < 1e-12);
  assert.equal(v.geomeanMet, true);
  assert.equal(v.maxMet, false);
  // The snapshot agents' bound: a tighter geomean, no bound on one task.
  const paging = issueVerdict(ratios, SNAPSHOT_BOUNDS);
  assert.ok(paging);
  assert.equal(paging.geomeanMet, true);
  assert.equal(paging.maxMet, true);
  assert.equal(
    issueVerdict(new Map(ISSUE_TASKS.map((id) => [id, 0.2])), SNAPSHOT_BOUNDS)?.geomeanMet,
    false,
  );
  const missing = new Map(ratios);
  missing.delete("widgets");
  assert.equal(issueVerdict(missing), undefined);
  assert.equal(issueVerdict(new Map([...ratios, ["find", NaN]])), undefined);
  assert.deepEqual([...ISSUE_TASKS], ["form", "find", "shop", "article", "widgets"]);
});

Deno.test("issueTargetLine() says met or missed for each bound, or that it was not measured", () => {
  const all = new Map(ISSUE_TASKS.map((id) => [id, 0.1]));
  const met = issueTargetLine(all, (id) => `#${id.length}`);
  assert.match(met, /geomean \*\*10\.0%\*\* \(≤ 25\.0%: met\)/);
  assert.match(met, /highest \*\*10\.0%\*\* on #4 form \(≤ 50\.0%: met\); target \*\*met\*\*\.$/);
  assert.match(met, new RegExp(CHEAPEST_BOUNDS.label));
  const over = issueTargetLine(new Map([...all, ["shop", 0.6]]));
  assert.match(over, /on shop shop \(≤ 50\.0%: \*\*missed\*\*\); target \*\*missed\*\*/);
  const paging = issueTargetLine(all, undefined, SNAPSHOT_BOUNDS);
  assert.match(
    paging,
    /geomean \*\*10\.0%\*\* \(≤ 16\.7%: met\), highest \*\*10\.0%\*\* on form form; target/,
  );
  assert.doesNotMatch(paging, /no task above/);
  assert.match(issueTargetLine(new Map()), /not measured in this run/);
});

Deno.test("peerSelector() names an element exactly, or by the start of its name", () => {
  assert.equal(
    peerSelector({ role: "link", text: 'Say "hi"', exact: true }),
    'role=link[name="Say \\"hi\\""s]',
  );
  // Playwright's role engine has no substring match: a start is an anchored regex, escaped.
  assert.equal(
    peerSelector({ role: "link", text: "Lumen (", exact: false }),
    "role=link[name=/^Lumen \\(/]",
  );
  assert.equal(
    peerSelector({ role: "button", text: "a/b.c", exact: false }),
    "role=button[name=/^a\\/b\\.c/]",
  );
});

Deno.test("matches() wants the role and the exact name, or its start", () => {
  const line = { ref: "e1", role: "link", name: "Lumen (16)" };
  assert.equal(matches(line, { role: "link", text: "Lumen (16)", exact: true }), true);
  assert.equal(matches(line, { role: "link", text: "Lumen (", exact: false }), true);
  assert.equal(matches(line, { role: "link", text: "Lumen (", exact: true }), false);
  assert.equal(matches(line, { role: "button", text: "Lumen (16)", exact: true }), false);
});

Deno.test("snapshotFileOf() and pageUrlOf() read a Playwright MCP 0.0.83 answer", () => {
  const answer = "### Ran Playwright code\n```js\nawait page.goto('x');\n```\n### Page\n" +
    "- Page URL: http://127.0.0.1:9/docs\n- Page Title: Docs\n### Snapshot\n" +
    "- [Snapshot](.playwright-mcp/page-2026-12-05T09-30-22-038Z.yml)";
  assert.equal(snapshotFileOf(answer), ".playwright-mcp/page-2026-12-05T09-30-22-038Z.yml");
  assert.equal(pageUrlOf(answer), "http://127.0.0.1:9/docs");
  assert.equal(snapshotFileOf("### Result\nFound 1 match"), undefined);
  // A link out of the working directory is not a snapshot file.
  assert.equal(snapshotFileOf("- [Snapshot](../../etc/passwd.yml)"), undefined);
  assert.equal(pageUrlOf("### Error\nno page"), undefined);
});

Deno.test("findArgs() uses the exact {role, name} form only where the schema has it", () => {
  const w = { role: "link", text: "Webhook signature verification", exact: true };
  assert.deepEqual(findArgs({ properties: { text: {} } }, w), { text: w.text });
  const exactForm = { properties: { text: {}, role: {}, name: {}, context: {} } };
  assert.deepEqual(findArgs(exactForm, w), { role: "link", name: w.text });
  assert.deepEqual(findArgs(exactForm, { ...w, exact: false }), { text: w.text });
  assert.deepEqual(findArgs(undefined, w), { text: w.text });
});

Deno.test("takes() keeps a peek to the servers whose schema has its arguments", () => {
  const peek = { tool: "browser_snapshot", args: { target: "main" } };
  assert.equal(takes({ properties: { target: {}, filename: {} } }, peek), true);
  assert.equal(takes({ properties: { page: {}, mode: {} } }, peek), false);
  assert.equal(takes(undefined, peek), false);
});

Deno.test("chargedStyle() charges the agent with the fewest median characters that passed", () => {
  const f = (median: number) => ({ median, min: median });
  assert.equal(chargedStyle([["snapshot", f(900)], ["find", f(300)], ["select", f(500)]]), "find");
  assert.equal(chargedStyle([["snapshot", f(900)], ["find", undefined]]), "snapshot");
  // A tie goes to the first listed.
  assert.equal(chargedStyle([["snapshot", f(300)], ["find", f(300)]]), "snapshot");
  assert.equal(chargedStyle([["snapshot", undefined], ["find", undefined]]), undefined);
  assert.deepEqual([...STYLES_OF.omotai], ["snapshot", "find"]);
  assert.deepEqual([...STYLES_OF.peer], ["snapshot", "find", "select"]);
});

Deno.test("wantsOverview() asks for the overview only where a card cannot carry the next step", () => {
  // A new page's content, or text revealed in place and read whole: both agents.
  for (const style of ["snapshot", "find"] as const) {
    assert.equal(wantsOverview(style, "page"), true);
    assert.equal(wantsOverview(style, "text"), true);
    // A control the card lists, a short change its diff shows, nothing: the card.
    assert.equal(wantsOverview(style, "control"), false);
    assert.equal(wantsOverview(style, "change"), false);
    assert.equal(wantsOverview(style, "none"), false);
  }
  // A link or an article: the snapshot agent has only the outline; the find agent looks the
  // link up by name and reads the article in reading mode.
  assert.equal(wantsOverview("snapshot", "link"), true);
  assert.equal(wantsOverview("snapshot", "prose"), true);
  assert.equal(wantsOverview("find", "link"), false);
  assert.equal(wantsOverview("find", "prose"), false);
});
