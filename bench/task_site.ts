/**
 * Pages for the multi-step task benchmark (bench/task_bench.ts): a 30-field form, a paged
 * table, an in-place search, a confirm() dialog, a page of 60,000 links, a docs site with a
 * 265-link sidebar and a long article with a link in it. Served from
 * 127.0.0.1 on a random port; records what it receives so the bench can check that both
 * agents really did the task.
 *
 * Every page carries the same ordinary site chrome (a header with navigation, a footer), so
 * neither side is measured on bare markup no real site has.
 *
 * @module
 */

/** The kinds of control on the long form. */
export type FieldControl = "text" | "email" | "tel" | "textarea" | "select" | "checkbox" | "radio";

/** One field of the long form and the value the task fills into it. */
export interface FormField {
  /** The form control's `name` (what the server receives). */
  name: string;
  /**
   * The accessible name the snapshot shows: the label text, or for a radio the label of the
   * option to choose.
   */
  label: string;
  control: FieldControl;
  /** Options of a select, or the option labels of a radio group. */
  options?: string[];
  /**
   * What to fill: the text, the option's text (select), "true"/"false" (checkbox) or the
   * option label to choose (radio: `label` is that option).
   */
  value: string;
}

const COUNTRIES = ["Portugal", "Spain", "France", "Germany", "Italy", "Netherlands", "Poland"];
const LANGUAGES = ["English", "Portuguese", "Spanish", "French", "German"];
const INDUSTRIES = ["Retail", "Logistics", "Healthcare", "Education", "Finance", "Media"];
const SIZES = ["1-10", "11-50", "51-200", "201-1000", "1000+"];
const ZONES = ["UTC", "Europe/Lisbon", "Europe/Madrid", "Europe/Berlin", "Europe/Warsaw"];

/** The 30 fields of `/form`, in page order, with the values the task fills in. */
export const FORM_FIELDS: readonly FormField[] = [
  { name: "first_name", label: "First name", control: "text", value: "Marta" },
  { name: "last_name", label: "Last name", control: "text", value: "Azevedo" },
  { name: "email", label: "Email", control: "email", value: "marta.azevedo@example.test" },
  { name: "phone", label: "Phone", control: "tel", value: "+351 21 555 0142" },
  { name: "mobile", label: "Mobile phone", control: "tel", value: "+351 91 555 0199" },
  { name: "company", label: "Company", control: "text", value: "Azevedo Logística Lda" },
  { name: "job_title", label: "Job title", control: "text", value: "Operations lead" },
  { name: "work_email", label: "Work email", control: "email", value: "ops@azevedo.example" },
  { name: "website", label: "Website", control: "text", value: "https://azevedo.example" },
  { name: "username", label: "Username", control: "text", value: "marta.ops" },
  { name: "street", label: "Street address", control: "text", value: "Rua do Ouro 118, 3º" },
  { name: "city", label: "City", control: "text", value: "Lisboa" },
  { name: "postcode", label: "Postal code", control: "text", value: "1100-063" },
  { name: "region", label: "State or region", control: "text", value: "Lisboa" },
  {
    name: "country",
    label: "Country",
    control: "select",
    options: COUNTRIES,
    value: "Portugal",
  },
  {
    name: "language",
    label: "Language",
    control: "select",
    options: LANGUAGES,
    value: "Portuguese",
  },
  {
    name: "industry",
    label: "Industry",
    control: "select",
    options: INDUSTRIES,
    value: "Logistics",
  },
  {
    name: "company_size",
    label: "Company size",
    control: "select",
    options: SIZES,
    value: "51-200",
  },
  {
    name: "timezone",
    label: "Time zone",
    control: "select",
    options: ZONES,
    value: "Europe/Lisbon",
  },
  {
    name: "billing_email",
    label: "Billing email",
    control: "email",
    value: "billing@azevedo.example",
  },
  { name: "vat", label: "VAT number", control: "text", value: "PT509876543" },
  { name: "referral", label: "Referral code", control: "text", value: "SPRING-24" },
  {
    name: "about",
    label: "About your project",
    control: "textarea",
    value: "Route planning for 40 vans across Lisbon and Porto, with daily depot reports.",
  },
  {
    name: "notes",
    label: "Delivery notes",
    control: "textarea",
    value: "Gate code 4471; deliveries before 10:00 only.",
  },
  {
    name: "contact",
    label: "Contact by phone",
    control: "radio",
    options: ["Contact by email", "Contact by phone", "Contact by post"],
    value: "Contact by phone",
  },
  {
    name: "plan",
    label: "Team plan",
    control: "radio",
    options: ["Basic plan", "Pro plan", "Team plan"],
    value: "Team plan",
  },
  { name: "newsletter", label: "Send me the newsletter", control: "checkbox", value: "true" },
  { name: "terms", label: "I accept the terms", control: "checkbox", value: "true" },
  { name: "privacy", label: "I accept the privacy policy", control: "checkbox", value: "true" },
  { name: "sms", label: "Text me about my order", control: "checkbox", value: "false" },
];

/** What the server must receive from a correct submission of `/form`, by field name. */
export function expectedSubmission(): Map<string, string> {
  const out = new Map<string, string>();
  for (const f of FORM_FIELDS) {
    if (f.control === "checkbox") {
      // An unchecked box is not submitted at all; a checked one sends "on".
      if (f.value === "true") out.set(f.name, "on");
    } else out.set(f.name, f.value);
  }
  return out;
}

/** Differences between a received form body and `expectedSubmission()`, one line each. */
export function submissionMismatches(received: URLSearchParams): string[] {
  const want = expectedSubmission();
  const out: string[] = [];
  for (const [name, value] of want) {
    const got = received.getAll(name);
    if (got.length !== 1 || got[0] !== value) {
      out.push(`${name}: want ${JSON.stringify(value)}, got ${JSON.stringify(got)}`);
    }
  }
  for (const name of new Set(received.keys())) {
    if (!want.has(name)) out.push(`${name}: unexpected ${JSON.stringify(received.getAll(name))}`);
  }
  return out;
}

/** Rows of the paged table, and rows per page. */
export const TABLE_ROWS = 50;
/** Rows per table page. */
export const TABLE_PAGE_ROWS = 10;
/** Pages of the table. */
export const TABLE_PAGES = TABLE_ROWS / TABLE_PAGE_ROWS;

const CUSTOMERS = [
  "Nordlicht GmbH",
  "Casa Verde",
  "Blue Harbour Ltd",
  "Petit Atelier",
  "Kowalski & Syn",
  "Ferreira Transportes",
  "Van Dijk Bouw",
  "Studio Ombra",
];
const STATUSES = ["Paid", "Open", "Overdue", "Paid", "Draft"];

/** One invoice row of the table. */
export interface InvoiceRow {
  id: string;
  customer: string;
  date: string;
  amount: string;
  status: string;
}

/** The table's rows, deterministic. */
export function invoiceRows(): InvoiceRow[] {
  return Array.from({ length: TABLE_ROWS }, (_, i) => ({
    id: `INV-${1001 + i}`,
    customer: CUSTOMERS[(i * 3) % CUSTOMERS.length],
    date: `2024-${String(1 + (i % 12)).padStart(2, "0")}-${
      String(1 + ((i * 7) % 28)).padStart(2, "0")
    }`,
    amount: `€${(120 + ((i * 379) % 4800)).toLocaleString("en-US")}.${
      String((i * 37) % 100).padStart(2, "0")
    }`,
    status: STATUSES[i % STATUSES.length],
  }));
}

const NOUNS = ["lamp", "chair", "table", "shelf", "rug", "mirror"];
const KINDS = ["desk", "floor", "wall", "side", "garden"];
const MATERIALS = ["brass", "oak", "steel", "walnut", "linen", "glass"];
const FEATURES = ["dimmable", "foldable"];

/** One product of the search catalog. */
export interface Product {
  id: number;
  title: string;
  price: string;
  blurb: string;
}

/** The search catalog: 360 products, every combination of noun, kind, material, feature. */
export function catalog(): Product[] {
  const out: Product[] = [];
  for (let i = 0; i < 360; i++) {
    const noun = NOUNS[i % 6];
    const kind = KINDS[Math.floor(i / 6) % 5];
    const material = MATERIALS[Math.floor(i / 30) % 6];
    const feature = FEATURES[Math.floor(i / 180) % 2];
    out.push({
      id: 5000 + i,
      title: `${material[0].toUpperCase()}${material.slice(1)} ${kind} ${noun}, ${feature}`,
      price: `€${19 + ((i * 53) % 380)}`,
      blurb: `A ${feature} ${kind} ${noun} in ${material}. Ships in ${2 + (i % 5)} days.`,
    });
  }
  return out;
}

/** The queries of the search task: the first, then three refinements. */
export const SEARCH_QUERIES = ["lamp", "desk lamp", "brass desk lamp", "brass desk lamp dimmable"];

/** Results the page lists at most. */
export const SEARCH_SHOWN = 20;

/** Products matching `query`: every word of it occurs in the title (what the page runs). */
export function searchCatalog(query: string): Product[] {
  const words = query.toLowerCase().split(/\s+/).filter(Boolean);
  return catalog().filter((p) => {
    const t = p.title.toLowerCase().replace(/,/g, "");
    return words.every((w) => t.split(" ").includes(w));
  });
}

/** The order the dialog page deletes. */
export const DIALOG_ORDER = "4471";

/** Links on the huge page (as tests/fixtures/wedge_site.ts `/huge`). */
export const HUGE_LINKS = 60_000;

/** A running task site. */
export interface TaskSite extends AsyncDisposable {
  origin: string;
  /** Bodies of `/form` submissions, in order. */
  formPosts: URLSearchParams[];
  /** Bodies of `/orders/delete` requests, in order. */
  deletes: string[];
}

const esc = (s: string) =>
  s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");

function page(title: string, main: string): Response {
  const nav = ["Home", "Products", "Orders", "Invoices", "Customers", "Reports", "Help"]
    .map((n) => `<a href="/${n.toLowerCase()}">${n}</a>`).join(" ");
  return new Response(
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${title} · Acme Portal</title></head>
<body><header><a href="/">Acme Portal</a><nav aria-label="Main">${nav}</nav>
<a href="/account">My account</a></header>
<main>${main}</main>
<footer><p>© 2024 Acme Portal</p><a href="/privacy">Privacy</a> <a href="/terms">Terms</a> <a href="/contact">Contact</a></footer>
</body></html>`,
    { headers: { "content-type": "text/html; charset=utf-8" } },
  );
}

function formControl(f: FormField): string {
  switch (f.control) {
    case "text":
    case "email":
    case "tel":
      return `<p><label>${esc(f.label)} <input type="${f.control}" name="${f.name}"></label></p>`;
    case "textarea":
      return `<p><label>${
        esc(f.label)
      } <textarea name="${f.name}" rows="3"></textarea></label></p>`;
    case "select":
      return `<p><label>${esc(f.label)} <select name="${f.name}"><option value="">Choose…</option>${
        (f.options ?? []).map((o) => `<option>${esc(o)}</option>`).join("")
      }</select></label></p>`;
    case "checkbox":
      return `<p><label><input type="checkbox" name="${f.name}"> ${esc(f.label)}</label></p>`;
    case "radio":
      return `<fieldset><legend>${f.name === "plan" ? "Plan" : "Preferred contact"}</legend>${
        (f.options ?? []).map((o) =>
          `<label><input type="radio" name="${f.name}" value="${esc(o)}"> ${esc(o)}</label>`
        ).join(" ")
      }</fieldset>`;
  }
}

function formPage(): Response {
  return page(
    "Apply",
    `<h1>Business account application</h1>
<p>Tell us about you and your company. Fields marked optional may be left empty.</p>
<form method="post" action="/form">${FORM_FIELDS.map(formControl).join("\n")}
<button type="submit">Submit application</button></form>`,
  );
}

function tablePage(n: number): Response {
  const rows = invoiceRows().slice((n - 1) * TABLE_PAGE_ROWS, n * TABLE_PAGE_ROWS);
  const prev = n > 1 ? `<a href="/table?page=${n - 1}">Previous page</a>` : "";
  const next = n < TABLE_PAGES ? `<a href="/table?page=${n + 1}">Next page</a>` : "";
  return page(
    `Invoices, page ${n}`,
    `<h1>Invoices</h1>
<table><caption>Invoices ${(n - 1) * TABLE_PAGE_ROWS + 1}–${
      n * TABLE_PAGE_ROWS
    } of ${TABLE_ROWS}</caption>
<thead><tr><th>Invoice</th><th>Customer</th><th>Date</th><th>Amount</th><th>Status</th></tr></thead>
<tbody>${
      rows.map((r) =>
        `<tr><td>${r.id}</td><td>${
          esc(r.customer)
        }</td><td>${r.date}</td><td>${r.amount}</td><td>${r.status}</td></tr>`
      ).join("\n")
    }</tbody></table>
<nav aria-label="Pagination">${prev} <span>Page ${n} of ${TABLE_PAGES}</span> ${next}</nav>`,
  );
}

function searchPage(): Response {
  // The page filters in place (same document) as a client-side search does; the catalog
  // travels with the page.
  const items = JSON.stringify(catalog());
  return page(
    "Search",
    `<h1>Product search</h1>
<form id="f" role="search"><label>Search products <input type="search" name="q" id="q"></label>
<button type="submit">Search</button></form>
<aside><h2>Categories</h2><a href="/c/lighting">Lighting</a> <a href="/c/seating">Seating</a>
<a href="/c/tables">Tables</a> <a href="/c/storage">Storage</a> <a href="/c/decor">Decor</a></aside>
<p id="count">Type a query to search 360 products.</p>
<ol id="results"></ol>
<script>
const ITEMS = ${items};
const SHOWN = ${SEARCH_SHOWN};
const esc = (s) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;");
document.getElementById("f").addEventListener("submit", (e) => {
  e.preventDefault();
  const q = document.getElementById("q").value;
  const words = q.toLowerCase().split(/\\s+/).filter(Boolean);
  const hits = ITEMS.filter((p) => {
    const t = p.title.toLowerCase().replace(/,/g, "").split(" ");
    return words.every((w) => t.includes(w));
  });
  document.getElementById("count").textContent =
    hits.length + " results for " + q + (hits.length > SHOWN ? ", showing the first " + SHOWN : "");
  document.getElementById("results").innerHTML = hits.slice(0, SHOWN).map((p) =>
    '<li><a href="/product/' + p.id + '">' + esc(p.title) + '</a> <span>' + p.price +
    '</span><p>' + esc(p.blurb) + '</p></li>').join("");
});
</script>`,
  );
}

function dialogPage(): Response {
  const orders = [
    ["4468", "Casa Verde", "3 items", "€212.40"],
    ["4469", "Nordlicht GmbH", "1 item", "€89.00"],
    ["4470", "Studio Ombra", "7 items", "€1,045.10"],
    [DIALOG_ORDER, "Blue Harbour Ltd", "2 items", "€318.75"],
    ["4472", "Petit Atelier", "4 items", "€96.20"],
  ];
  return page(
    "Orders",
    `<h1>Orders</h1>
<ul>${
      orders.map(([id, who, n, sum]) => `<li>Order ${id} · ${esc(who)} · ${n} · ${sum}</li>`).join(
        "",
      )
    }</ul>
<h2>Order ${DIALOG_ORDER}</h2>
<p id="state">Order ${DIALOG_ORDER} is open.</p>
<button id="del">Delete order ${DIALOG_ORDER}</button>
<script>
document.getElementById("del").onclick = () => {
  if (confirm("Delete order ${DIALOG_ORDER}? This cannot be undone.")) {
    // The page says so at once, then tells the server, as an optimistic UI does.
    document.getElementById("state").textContent = "Order ${DIALOG_ORDER} was deleted.";
    fetch("/orders/delete", { method: "POST", body: "${DIALOG_ORDER}" });
  } else {
    document.getElementById("state").textContent = "Order ${DIALOG_ORDER} was kept.";
  }
};
</script>`,
  );
}

function hugePage(): Response {
  // Same markup as tests/fixtures/wedge_site.ts /huge, without the chrome: that page is the
  // reference for "a page too big to read in one go".
  const links = Array.from({ length: HUGE_LINKS }, (_, i) => `<a href="/item/${i}">Item ${i}</a>`);
  return new Response(
    `<!doctype html><html><head><meta charset="utf-8"><title>Huge</title></head><body><h1>Huge</h1>${
      links.join(" ")
    }</body></html>`,
    { headers: { "content-type": "text/html; charset=utf-8" } },
  );
}

/** Topics of the docs site's sidebar: sections of twelve pages each, as a real docs site has. */
const DOC_SECTIONS = [
  "Getting started",
  "Concepts",
  "Guides",
  "Authentication",
  "Payments",
  "Billing",
  "Customers",
  "Orders",
  "Inventory",
  "Shipping",
  "Reporting",
  "Webhooks",
  "Integrations",
  "SDKs",
  "CLI",
  "Security",
  "Compliance",
  "Limits",
  "Errors",
  "Changelog",
  "Migration",
  "Support",
];
const DOC_PAGES = [
  "Overview",
  "Quickstart",
  "Setup",
  "Configuration",
  "Examples",
  "Best practices",
  "Troubleshooting",
  "FAQ",
  "Reference",
  "Limits",
  "Versioning",
  "Glossary",
];

/** The sidebar link the find task looks for, deep in the sidebar. */
export const DOCS_TARGET = "Webhook signature verification";

/** Every sidebar link's text, in page order (264 plus the target). */
export function docsSidebar(): string[] {
  const out: string[] = [];
  for (const section of DOC_SECTIONS) {
    for (const p of DOC_PAGES) out.push(`${section}: ${p}`);
    if (section === "Webhooks") out.push(DOCS_TARGET);
  }
  return out;
}

const slug = (s: string) => s.toLowerCase().replace(/[^a-z0-9]+/g, "-").replace(/^-|-$/g, "");

function docsPage(path: string): Response {
  const sidebar = docsSidebar().map((t) => `<li><a href="/docs/${slug(t)}">${esc(t)}</a></li>`)
    .join("");
  const title = path === "" ? "Documentation" : docsSidebar().find((t) => slug(t) === path);
  if (title === undefined) return new Response("not found", { status: 404 });
  const body = path === slug(DOCS_TARGET)
    ? `<p>Every webhook carries a signature header computed over the raw body with your endpoint's secret. Compare it in constant time before you trust the event.</p>`
    : `<p>Pick a topic in the sidebar, or search the documentation.</p>`;
  return page(
    title,
    `<nav aria-label="Documentation"><ul>${sidebar}</ul></nav><article><h1>${
      esc(title)
    }</h1>${body}</article>`,
  );
}

/** The long article's paragraphs: each ends with a word no other paragraph has. */
export function articleParagraphs(): string[] {
  const topics = [
    "the valley's first terraces",
    "the river's seasonal floods",
    "the cooperative's founding",
    "the old mill",
    "the stone walls",
    "the grape varieties",
    "the harvest calendar",
    "the cellar's temperature",
    "the blending trials",
    "the barrel makers",
  ];
  return Array.from(
    { length: 60 },
    (_, i) =>
      `Paragraph ${i + 1} looks at ${topics[i % topics.length]}: growers describe how the work ` +
      `changed over three generations, what the climate took and gave back, and which habits ` +
      `stayed because nothing better came along. Marker word: vintage${i + 1}x.`,
  );
}

/** The link inside the article the reading task follows. */
export const ARTICLE_LINK = "Read the follow-up: the second harvest";

function articlePage(): Response {
  const related = Array.from(
    { length: 40 },
    (_, i) => `<li><a href="/stories/${i}">Story ${i + 1}: a village, a vineyard, a year</a></li>`,
  ).join("");
  const paragraphs = articleParagraphs().map((p, i) =>
    `<p>${p}</p>${i === 29 ? `<p><a href="/article/follow-up">${ARTICLE_LINK}</a></p>` : ""}`
  ).join("");
  return page(
    "Three generations on the terraces",
    `<nav aria-label="Sections"><a href="/news">News</a> <a href="/food">Food</a> <a href="/travel">Travel</a> <a href="/culture">Culture</a> <a href="/opinion">Opinion</a></nav>
<article><h1>Three generations on the terraces</h1><p>By Ana Ribeiro · 12 min read</p>${paragraphs}</article>
<aside><h2>More stories</h2><ul>${related}</ul></aside>`,
  );
}

/** Serves the task pages on a random loopback port. */
export function serveTaskSite(): TaskSite {
  const formPosts: URLSearchParams[] = [];
  const deletes: string[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
    const url = new URL(req.url);
    if (req.method === "POST" && url.pathname === "/form") {
      formPosts.push(new URLSearchParams(await req.text()));
      return page(
        "Received",
        `<h1>Application received</h1><p>Thank you. We will reply within two working days.</p>`,
      );
    }
    if (req.method === "POST" && url.pathname === "/orders/delete") {
      deletes.push(await req.text());
      return new Response("ok");
    }
    switch (url.pathname) {
      case "/":
        return page("Home", `<h1>Acme Portal</h1><p>Welcome back.</p>`);
      case "/form":
        return formPage();
      case "/table": {
        const n = Number(url.searchParams.get("page") ?? 1);
        if (!Number.isInteger(n) || n < 1 || n > TABLE_PAGES) {
          return new Response("not found", { status: 404 });
        }
        return tablePage(n);
      }
      case "/search":
        return searchPage();
      case "/dialog":
        return dialogPage();
      case "/huge":
        return hugePage();
      case "/article":
        return articlePage();
      case "/article/follow-up":
        return page(
          "Follow-up",
          `<h1>Follow-up: the second harvest</h1><p>A year later the terraces held.</p>`,
        );
      case "/docs":
        return docsPage("");
      case "/favicon.ico":
        return new Response(null, { status: 204 });
      default:
        if (url.pathname.startsWith("/docs/")) return docsPage(url.pathname.slice(6));
        return new Response("not found", { status: 404 });
    }
  });
  return {
    origin: `http://127.0.0.1:${server.addr.port}`,
    formPosts,
    deletes,
    async [Symbol.asyncDispose]() {
      await server.shutdown();
    },
  };
}
