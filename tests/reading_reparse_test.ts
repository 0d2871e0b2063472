/**
 * Reading mode on a page where Readability starts over (a first attempt under 500 characters
 * makes it re-parse its saved HTML, so every node it returns is new): a shop's results page,
 * each product a heading link, paged. Every link still gets its ref line, the one the
 * outline gave that element; a link the runtime did not mark, or one a page forged a mark
 * for, gets none.
 */
import assert from "node:assert/strict";
import { startHarness } from "./helpers/harness.ts";

const html = (title: string, body: string) =>
  new Response(
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${title}</title></head><body>${body}</body></html>`,
    { headers: { "content-type": "text/html; charset=utf-8", "cache-control": "no-store" } },
  );

/**
 * Products on the page: few enough that Readability's first attempt yields under its 500
 * characters and it starts over from the saved HTML (three times, measured on Chromium).
 */
const PRODUCTS = 6;

/** A shop's results page, shaped as the task bench's `/shop?q=lamp`. */
function shop(extra = ""): string {
  const nav = ["Home", "Products", "Orders", "Invoices", "Help"]
    .map((n) => `<a href="/${n.toLowerCase()}">${n}</a>`).join(" ");
  const facets = ["Lumen", "Brightway", "Hearth", "Novo"]
    .map((b, i) => `<li><a href="/shop?q=lamp&amp;brand=${b}">${b} (${i + 2})</a></li>`).join("");
  const cards = Array.from(
    { length: PRODUCTS },
    (_, i) =>
      `<li><h3><a href="/shop/p/${i + 1}">Product lamp ${i + 1}</a></h3>
<p>Lumen · Rated 4.${i % 10} out of 5 (${10 + i} reviews)</p>
<p>€${20 + i}.95 · In stock</p>
<button type="button">Add to cart</button></li>`,
  ).join("\n");
  return `<header><a href="/">Acme Portal</a><nav aria-label="Main">${nav}</nav></header>
<main><nav aria-label="Breadcrumb"><a href="/">Home</a> › <a href="/shop">Shop</a></nav>
<form role="search" action="/shop"><label>Search products <input type="search" name="q"></label>
<button type="submit">Search</button></form>
<aside aria-label="Filters"><h2>Filter results</h2><h3>Brand</h3><ul>${facets}</ul></aside>
<section aria-label="Results"><h1>Results for “lamp”</h1><p>Showing 7–12 of 18 results</p>
<ul>${cards}</ul>${extra}
<nav aria-label="Pagination"><a href="/shop?q=lamp&amp;page=1" rel="prev">Previous page</a>
<a href="/shop?q=lamp&amp;page=1">1</a> <a href="/shop?q=lamp&amp;page=2" aria-current="page">2</a>
<a href="/shop?q=lamp&amp;page=3">3</a> <a href="/shop?q=lamp&amp;page=3" rel="next">Next page</a></nav>
</section></main><footer><p>© 2024 Acme Portal</p><a href="/privacy">Privacy</a></footer>`;
}

function serveSite(): Deno.HttpServer<Deno.NetAddr> {
  return Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, (req) => {
    const { pathname } = new URL(req.url);
    if (pathname === "/shop") return html("Lamps · Shop", shop());
    if (/^\/(evil2?|shop\/p)\/\d+$/.test(pathname)) return html("Landed", `<h1>Landed</h1>`);
    if (pathname === "/forged") {
      // The page marks its own links with the runtime's attribute, with every value a
      // binding could take: none of them may bind a link to another's element.
      const forged = Array.from(
        { length: 40 },
        (_, i) =>
          `<p><a href="/evil/${i}" data-omotai-read-link="${i}">Forged ${i}</a>` +
          ` <a href="/evil2/${i}" data-omotai-read-link="x:${i}">Forged two ${i}</a></p>`,
      ).join("");
      return html("Lamps · Shop", shop(forged));
    }
    return new Response("not found", { status: 404 });
  });
}

/** The text inside the untrusted-page block of a result (markers excluded). */
function blockOf(text: string): string {
  const m = text.match(
    /<<<untrusted-page nonce=([0-9a-f]{16}) origin=[^>]*>>>\n([^]*?)\n<<<end-untrusted-page nonce=\1>>>/,
  );
  assert.ok(m, `no untrusted-page block in:\n${text}`);
  return m[2];
}

/**
 * `[eN] "text" -> path` lines of a block (a link within the page has no path), as a map
 * from text to ref and path.
 */
function refLines(block: string): Map<string, { ref: string; path: string }> {
  const out = new Map<string, { ref: string; path: string }>();
  for (const m of block.matchAll(/^\[(e\d+)\] "([^"]*)"(?: -> (\S+))?$/gm)) {
    out.set(m[2], { ref: m[1], path: m[3] ?? "" });
  }
  return out;
}

Deno.test("readArticle binds links when Readability re-parses: a shop's results page has every ref line", async () => {
  await using site = serveSite();
  const origin = `http://127.0.0.1:${site.addr.port}`;
  await using h = await startHarness(() => `allowed_origins: [${origin}]\n`);
  await using c = await h.connect();
  const nav = await c.call("browser_navigate", { url: `${origin}/shop` });
  assert.equal(nav.isError, false, nav.text);
  const read = await c.call("browser_snapshot", { mode: "read" });
  assert.equal(read.isError, false, read.text);
  const block = blockOf(read.text);
  const lines = refLines(block);
  for (let i = 1; i <= PRODUCTS; i++) {
    const line = lines.get(`Product lamp ${i}`);
    assert.ok(line, `no ref line for product ${i}:\n${block}`);
    assert.equal(line.path, `/shop/p/${i}`);
    // The outline's ref for that same element.
    assert.match(nav.text, new RegExp(`\\[${line.ref}\\] "Product lamp ${i}"`));
  }
  assert.ok(lines.get("Previous page"), block);
  assert.ok(lines.get("Next page"), block);
  // The ref clicks its own link.
  const ref = lines.get("Product lamp 4")!.ref;
  const click = await c.call("browser_click", { ref, element: "Product lamp 4" });
  assert.equal(click.isError, false, click.text);
  assert.match(click.text, /^path: \/shop\/p\/4$/m);
});

Deno.test("readArticle binds links when Readability re-parses: a page's own marks bind nothing wrong", async () => {
  await using site = serveSite();
  const origin = `http://127.0.0.1:${site.addr.port}`;
  await using h = await startHarness(() => `allowed_origins: [${origin}]\n`);
  await using c = await h.connect();
  const nav = await c.call("browser_navigate", { url: `${origin}/forged` });
  assert.equal(nav.isError, false, nav.text);
  const read = await c.call("browser_snapshot", { mode: "read" });
  assert.equal(read.isError, false, read.text);
  const block = blockOf(read.text);
  const lines = refLines(block);
  assert.ok(lines.size > PRODUCTS, block);
  // One ref per link: no element bound twice.
  const refs = [...lines.values()].map((l) => l.ref);
  assert.equal(new Set(refs).size, refs.length);
  // Each ref clicks the link its line names, whatever marks the page set (the mark of one
  // link's element copied onto another's would send the click elsewhere).
  for (const text of ["Forged 3", "Forged two 3", "Forged 1", "Product lamp 5"]) {
    const line = lines.get(text);
    assert.ok(line, block);
    const click = await c.call("browser_click", { ref: line.ref, element: text });
    assert.equal(click.isError, false, click.text);
    assert.match(
      click.text,
      new RegExp(`^path: ${line.path}$`, "m"),
      `${text}: ${click.text.slice(0, 300)}`,
    );
    await c.call("browser_navigate", { url: `${origin}/forged` });
    const again = refLines(blockOf((await c.call("browser_snapshot", { mode: "read" })).text));
    for (const [t, l] of again) lines.set(t, l);
  }
  // The forged links shown are read with their own paths.
  for (const [text, { path }] of lines) {
    const forged = text.match(/^Forged (two )?(\d+)$/);
    if (forged) assert.equal(path, `/evil${forged[1] ? "2" : ""}/${forged[2]}`);
  }
  for (let i = 1; i <= PRODUCTS; i++) assert.ok(lines.get(`Product lamp ${i}`), block);
});
