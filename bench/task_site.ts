/**
 * Pages for the multi-step task benchmark (bench/task_bench.ts): a 30-field form, a paged
 * table, an in-place search, a confirm() dialog, a page of 60,000 links, a docs site with a
 * 265-link sidebar, a long article with a link in it, a real news article (a corpus page
 * with one link of its body pointed here), a shop with a search, sidebar filters and paging,
 * and a product page whose tabs, accordion and "load more" change it in place. Served from
 * 127.0.0.1 on a random port; records what it receives so the bench can check that both
 * agents really did the task.
 *
 * Every page carries the same ordinary site chrome (a header with navigation, a footer), so
 * neither side is measured on bare markup no real site has.
 *
 * @module
 */
import { CORPUS_DIR } from "./corpus.ts";

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

/** Whether every word of `query` is a whole word of `title` (case and commas ignored). */
export function titleMatches(title: string, query: string): boolean {
  const words = query.toLowerCase().split(/\s+/).filter(Boolean);
  const t = title.toLowerCase().replace(/,/g, "").split(" ");
  return words.every((w) => t.includes(w));
}

/** Products matching `query`: every word of it occurs in the title (what the page runs). */
export function searchCatalog(query: string): Product[] {
  return catalog().filter((p) => titleMatches(p.title, query));
}

/** The order the dialog page deletes. */
export const DIALOG_ORDER = "4471";

/** Links on the huge page (as tests/fixtures/wedge_site.ts `/huge`). */
export const HUGE_LINKS = 60_000;

/** One product of the shop (`/shop`). */
export interface ShopProduct {
  id: number;
  title: string;
  brand: string;
  /** The sidebar's category name. */
  category: string;
  /** Price in euro cents. */
  cents: number;
  inStock: boolean;
  /** Average rating out of 5, one decimal. */
  rating: number;
  reviews: number;
}

// Each product line is one category; its three brands make two fifths, two fifths and one
// fifth of it, as a shop's catalog is lopsided rather than a grid.
const SHOP_LINES = [
  { noun: "lamp", category: "Lighting", brands: ["Lumen", "Nordhaus", "Casa Alta"] },
  { noun: "chair", category: "Seating", brands: ["Oakfield", "Nordhaus", "Studio Vela"] },
  { noun: "table", category: "Tables", brands: ["Oakfield", "Casa Alta", "Studio Vela"] },
  { noun: "shelf", category: "Storage", brands: ["Nordhaus", "Oakfield", "Lumen"] },
  { noun: "rug", category: "Rugs", brands: ["Studio Vela", "Casa Alta", "Lumen"] },
  { noun: "mirror", category: "Decor", brands: ["Casa Alta", "Studio Vela", "Nordhaus"] },
];
const SHOP_STYLES = ["Arc", "Dome", "Halo", "Pillar", "Cone", "Bell", "Loop", "Mesa"];
const SHOP_FINISHES = ["brass", "oak", "black steel", "walnut", "linen"];
const SHOP_BRAND_SHARE = [0, 0, 1, 1, 2];

/** Products per line of the shop's catalog. */
const SHOP_PER_LINE = SHOP_STYLES.length * SHOP_FINISHES.length;

/** Results per page of the shop. */
export const SHOP_PAGE_SIZE = 10;

/** The shop's catalog: 240 products, six lines of 40, deterministic. */
export function shopCatalog(): ShopProduct[] {
  const out: ShopProduct[] = [];
  for (let i = 0; i < SHOP_LINES.length * SHOP_PER_LINE; i++) {
    const line = SHOP_LINES[i % SHOP_LINES.length];
    const j = Math.floor(i / SHOP_LINES.length);
    out.push({
      id: 7001 + i,
      title: `${SHOP_STYLES[j % SHOP_STYLES.length]} ${line.noun} in ${
        SHOP_FINISHES[Math.floor(j / SHOP_STYLES.length)]
      }`,
      brand: line.brands[SHOP_BRAND_SHARE[j % SHOP_BRAND_SHARE.length]],
      category: line.category,
      cents: (19 + ((i * 53) % 280)) * 100 + [0, 50, 95][(i + j) % 3],
      // About one in six out of stock, spread over lines and brands.
      inStock: (i * 37) % 11 > 1,
      rating: 3.2 + ((i * 13) % 18) / 10,
      reviews: 3 + ((i * 29) % 240),
    });
  }
  return out;
}

/** The price bands of the shop's sidebar: the URL value, the label, the bounds in cents. */
export const SHOP_PRICE_BANDS: readonly {
  value: string;
  label: string;
  min: number;
  max: number;
}[] = [
  { value: "0-50", label: "Under €50", min: 0, max: 5_000 },
  { value: "50-100", label: "€50 to €100", min: 5_000, max: 10_000 },
  { value: "100-200", label: "€100 to €200", min: 10_000, max: 20_000 },
  { value: "200-", label: "€200 and over", min: 20_000, max: Infinity },
];

/** The orders the shop's "Sort by" offers: the URL value and the label. */
export const SHOP_SORTS: readonly { value: string; label: string }[] = [
  { value: "relevance", label: "Relevance" },
  { value: "price-asc", label: "Price: low to high" },
  { value: "price-desc", label: "Price: high to low" },
  { value: "rating", label: "Customer rating" },
];

/** What a shop URL asks for: the query, the filters, the order and the page. */
export interface ShopQuery {
  q: string;
  category?: string;
  brand?: string;
  /** A `SHOP_PRICE_BANDS` value. */
  price?: string;
  /** Only products in stock. */
  stock?: boolean;
  /** A `SHOP_SORTS` value; relevance (catalog order) when absent. */
  sort?: string;
  /** 1-based. */
  page: number;
}

/** The `ShopQuery` of a `/shop` URL's parameters (a bad page number is page 1). */
export function shopQueryOf(params: URLSearchParams): ShopQuery {
  const page = Number(params.get("page") ?? 1);
  const opt = (k: string) => params.get(k) || undefined;
  return {
    q: (params.get("q") ?? "").trim(),
    category: opt("category"),
    brand: opt("brand"),
    price: opt("price"),
    stock: params.get("stock") === "1" || undefined,
    sort: opt("sort"),
    page: Number.isInteger(page) && page >= 1 ? page : 1,
  };
}

/** The `/shop` URL (path and query) of `query`, defaults left out. */
export function shopHref(query: ShopQuery): string {
  const p = new URLSearchParams();
  if (query.q) p.set("q", query.q);
  if (query.category) p.set("category", query.category);
  if (query.brand) p.set("brand", query.brand);
  if (query.price) p.set("price", query.price);
  if (query.stock) p.set("stock", "1");
  if (query.sort && query.sort !== "relevance") p.set("sort", query.sort);
  if (query.page > 1) p.set("page", String(query.page));
  const s = p.toString();
  return s ? `/shop?${s}` : "/shop";
}

/** Every product `query` selects (all its filters, any page), in its order. */
export function shopResults(query: Omit<ShopQuery, "page">): ShopProduct[] {
  const band = SHOP_PRICE_BANDS.find((b) => b.value === query.price);
  const hits = shopCatalog().filter((p) =>
    titleMatches(p.title, query.q) &&
    (!query.category || p.category === query.category) &&
    (!query.brand || p.brand === query.brand) &&
    (!band || (p.cents >= band.min && p.cents < band.max)) &&
    (!query.stock || p.inStock)
  );
  const by: Record<string, (a: ShopProduct, b: ShopProduct) => number> = {
    "price-asc": (a, b) => a.cents - b.cents,
    "price-desc": (a, b) => b.cents - a.cents,
    rating: (a, b) => b.rating - a.rating,
  };
  const order = by[query.sort ?? ""];
  return order ? hits.sort((a, b) => order(a, b) || a.id - b.id) : hits;
}

/** The products page `query.page` of `query` lists. */
export function shopPage(query: ShopQuery): ShopProduct[] {
  return shopResults(query).slice(
    (query.page - 1) * SHOP_PAGE_SIZE,
    query.page * SHOP_PAGE_SIZE,
  );
}

/**
 * The sidebar's counts for one facet: each value's number of results under `query` with
 * every other filter kept and this facet's own dropped (as a shop's facets count), values
 * with none left out, in first-seen order.
 */
export function shopFacet(
  query: Omit<ShopQuery, "page">,
  facet: "category" | "brand",
): Map<string, number> {
  const out = new Map<string, number>();
  for (const p of shopResults({ ...query, [facet]: undefined })) {
    out.set(p[facet], (out.get(p[facet]) ?? 0) + 1);
  }
  return out;
}

/** Euro cents as the shop shows a price: `€49.95`. */
export function euros(cents: number): string {
  return `€${Math.floor(cents / 100)}.${String(cents % 100).padStart(2, "0")}`;
}

/** The query the shop task types. */
export const SHOP_QUERY = "lamp";
/** The brand filter the shop task applies. */
export const SHOP_BRAND = "Lumen";

/** The specifications tab of the product page (`/product/halo-floor-lamp`), in order. */
export const WIDGET_SPECS: readonly (readonly [string, string])[] = [
  ["Height", "165 cm"],
  ["Shade diameter", "38 cm"],
  ["Base diameter", "28 cm"],
  ["Weight", "6.2 kg"],
  ["Cable length", "2 m, fabric-covered"],
  ["Bulb", "E27, max 60 W (included)"],
  ["Luminous flux", "806 lm"],
  ["Colour temperature", "2700 K"],
  ["Dimmer", "Foot dimmer, 10–100%"],
  ["Materials", "Brass-plated steel, linen shade"],
  ["Protection rating", "IP20 (indoor use)"],
  ["Warranty", "5 years"],
];

/** The spec the widgets task reads. */
export const WIDGET_SPEC = "Luminous flux";

/** The product page's FAQ accordion: question, answer. */
export const WIDGET_FAQ: readonly (readonly [string, string])[] = [
  [
    "Is the bulb included?",
    "Yes. The lamp ships with a 7 W LED bulb equivalent to 60 W; any E27 bulb fits.",
  ],
  [
    "Can I use a smart bulb with it?",
    "Yes, any E27 smart bulb up to 60 W works; leave the foot dimmer at full brightness so the bulb's own dimming takes over.",
  ],
  [
    "How tall is it with the shade?",
    "165 cm from the floor to the top of the shade, so the light falls just above a seated reader's shoulder.",
  ],
  [
    "Does it need assembly?",
    "Screw the pole into the base and clip on the shade; it takes about five minutes and no tools.",
  ],
  [
    "Can I buy a replacement shade?",
    "Yes, shades in linen, paper and black cotton are sold separately in the Lighting section.",
  ],
  [
    "What if it arrives damaged?",
    "Photograph the damage and contact us within 14 days; we send a replacement part or a new lamp.",
  ],
];

/** The FAQ question the widgets task opens. */
export const WIDGET_QUESTION = "Can I use a smart bulb with it?";

/** Reviews the product page shows at first and adds per "Load more reviews". */
export const REVIEWS_STEP = 10;

/** One customer review of the product page. */
export interface Review {
  /** The reviewer as shown, unique on the page. */
  author: string;
  stars: number;
  date: string;
  title: string;
  text: string;
  helpful: number;
}

const REVIEWERS = [
  "Amelia",
  "Bruno",
  "Carla",
  "Daniel",
  "Elif",
  "Farid",
  "Greta",
  "Hugo",
  "Ines",
  "Jonas",
  "Kasia",
  "Luca",
  "Marit",
  "Nuno",
  "Olga",
  "Pieter",
  "Quentin",
  "Rosa",
  "Sven",
  "Tereza",
  "Umar",
  "Vera",
  "Wim",
  "Ximena",
  "Yusuf",
  "Zofia",
  "Anton",
  "Beatriz",
  "Cyril",
  "Dora",
];
// Each body with the stars and title its writer gave it.
const REVIEW_BODIES: readonly { stars: number; title: string; text: string }[] = [
  {
    stars: 5,
    title: "Lovely warm light",
    text:
      "The light is warm without being yellow and the foot dimmer goes low enough for evenings.",
  },
  {
    stars: 4,
    title: "Sturdy and good looking",
    text: "Heavier than it looks, which is good: it does not wobble on a thick rug.",
  },
  {
    stars: 3,
    title: "Shade a bit small",
    text: "I expected the shade to be wider; it still lights the whole corner well.",
  },
  {
    stars: 5,
    title: "Perfect by the reading chair",
    text: "Exactly the height I needed beside an armchair, the brass matches our frames.",
  },
  {
    stars: 5,
    title: "Dimmer is the best part",
    text: "The dimmer is smooth across its range and does not hum with the bulb supplied.",
  },
  {
    stars: 4,
    title: "Took five minutes to set up",
    text: "Arrived well packed, the pole screws in firmly and the cable is long enough.",
  },
];

/** The product page's 30 reviews, newest first, deterministic; authors are unique. */
export function widgetReviews(): Review[] {
  return REVIEWERS.map((name, i) => ({
    author: `${name} ${String.fromCharCode(65 + ((i * 7) % 26))}.`,
    date: `2024-${String(12 - Math.floor(i / 3)).padStart(2, "0")}-${
      String(28 - ((i * 5) % 27)).padStart(2, "0")
    }`,
    ...REVIEW_BODIES[(i * 5) % REVIEW_BODIES.length],
    helpful: (i * 11) % 17,
  }));
}

/** The corpus page the article task serves at `/news/article` (bench/corpus.ts). */
export const NEWS_CORPUS_PAGE = "guardian-1";

/** Where the one rewritten link of the article points. */
export const NEWS_FOLLOW_UP = "/news/follow-up";

/** The sentence the follow-up page holds, for the task to check. */
export const NEWS_FOLLOW_UP_TEXT =
  "By the end of the season rangers had logged eleven more strandings on Ninety Mile Beach.";

/**
 * Three sentences of the article's body (start, middle, end) the task checks were read: none
 * holds markup, a quote or a colon, so each side shows it as one run of text.
 */
export const NEWS_SENTENCES = [
  "has now overseen more than 500 strandings",
  "He says mass strandings are getting more local and international attention and money " +
  "from donations, but traditional knowledge is being dismissed as overly spiritual.",
  "But for Parata and his family the slow, painful deaths of their ancestors are personal",
];

/** Where `rewriteBodyLink()` put the page's link, and the page. */
export interface RewrittenPage {
  html: string;
  /** The link's text, which is its accessible name. */
  linkText: string;
  /** Where it pointed before. */
  was: string;
}

const ENTITIES: Record<string, string> = {
  amp: "&",
  lt: "<",
  gt: ">",
  quot: '"',
  "#39": "'",
  nbsp: " ",
};

/** A link's text as the browser names it: tags dropped, entities decoded, spaces collapsed. */
function linkText(inner: string): string {
  return inner.replace(/<[^>]*>/g, "").replace(
    /&(amp|lt|gt|quot|#39|nbsp);/g,
    (_, e) => ENTITIES[e],
  ).replace(/\s+/g, " ").trim();
}

/**
 * Where the element whose opening tag holds `marker` lies in `html`: from its `<` to after
 * its closing tag, nested elements of its own tag name counted; undefined when there is none.
 */
export function elementSpan(
  html: string,
  marker: string,
): { start: number; end: number } | undefined {
  const at = html.indexOf(marker);
  if (at < 0) return undefined;
  const start = html.lastIndexOf("<", at);
  const tag = /^<([a-zA-Z][\w-]*)/.exec(html.slice(start))?.[1];
  if (!tag) return undefined;
  const re = new RegExp(`<(/?)${tag}\\b[^>]*>`, "gi");
  re.lastIndex = start;
  let depth = 0;
  for (let m = re.exec(html); m; m = re.exec(html)) {
    depth += m[1] ? -1 : 1;
    if (depth === 0) return { start, end: m.index + m[0].length };
  }
  return undefined;
}

/**
 * `html` with one link of the element whose opening tag holds `bodyMarker` (an article's
 * body) pointed at `href`: the first `<a href>` there that leaves the page (not `#…`), has
 * text, and whose text no other link of the page has. The task follows it by name, and a
 * name shared with another link (the Guardian repeats an in-text tag link at the foot) would
 * leave that to chance. Throws when the body or such a link is missing.
 */
export function rewriteBodyLink(html: string, bodyMarker: string, href: string): RewrittenPage {
  const span = elementSpan(html, bodyMarker);
  if (!span) throw new Error(`no element holding ${bodyMarker}`);
  const links = [...html.matchAll(/<a\b([^>]*)>([\s\S]*?)<\/a>/gi)].map((m) => ({
    index: m.index,
    attrs: m[1],
    text: linkText(m[2]),
  }));
  const uses = new Map<string, number>();
  for (const l of links) uses.set(l.text, (uses.get(l.text) ?? 0) + 1);
  const pick = links.find((l) => {
    const target = /\bhref="([^"]*)"/.exec(l.attrs)?.[1];
    return l.index >= span.start && l.index < span.end && target !== undefined &&
      !target.startsWith("#") && l.text !== "" && uses.get(l.text) === 1;
  });
  if (!pick) throw new Error(`no link of its own name in ${bodyMarker}`);
  const was = /\bhref="([^"]*)"/.exec(pick.attrs)?.[1] ?? "";
  const attrs = pick.attrs.replace(/\bhref="[^"]*"/, `href="${href}"`);
  // The opening tag starts at the match: `<a` then the attributes.
  const tagEnd = pick.index + 2 + pick.attrs.length;
  return {
    html: html.slice(0, pick.index) + "<a" + attrs + html.slice(tagEnd),
    linkText: pick.text,
    was,
  };
}

let newsCache: RewrittenPage | undefined;

/**
 * The article page of the task site: the corpus's `guardian-1` with the first link of its
 * own name in the body (`itemprop="articleBody"`) sent to {@link NEWS_FOLLOW_UP}.
 */
export function newsArticle(): RewrittenPage {
  newsCache ??= rewriteBodyLink(
    Deno.readTextFileSync(`${CORPUS_DIR}/${NEWS_CORPUS_PAGE}/index.html`),
    'itemprop="articleBody"',
    NEWS_FOLLOW_UP,
  );
  return newsCache;
}

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

function shopPageResponse(query: ShopQuery): Response {
  const { page: n, ...filters } = query;
  const all = shopResults(filters);
  const pages = Math.max(1, Math.ceil(all.length / SHOP_PAGE_SIZE));
  if (n > pages) return new Response("not found", { status: 404 });
  const items = shopPage(query);
  const at = (change: Partial<ShopQuery>) => esc(shopHref({ ...query, page: 1, ...change }));
  const facetList = (facet: "category" | "brand", label: string) => {
    const counts = shopFacet(filters, facet);
    const chosen = filters[facet];
    const links = [...counts].map(([v, c]) =>
      `<li><a href="${at({ [facet]: v })}"${v === chosen ? ' aria-current="true"' : ""}>${
        esc(v)
      } (${c})</a></li>`
    );
    if (chosen) links.unshift(`<li><a href="${at({ [facet]: undefined })}">Any ${label}</a></li>`);
    return links.join("");
  };
  const priceCounts = (band: (typeof SHOP_PRICE_BANDS)[number]) =>
    shopResults({ ...filters, price: band.value }).length;
  const prices = SHOP_PRICE_BANDS.filter((b) => priceCounts(b) > 0).map((b) =>
    `<li><a href="${at({ price: b.value })}"${
      b.value === filters.price ? ' aria-current="true"' : ""
    }>${esc(b.label)} (${priceCounts(b)})</a></li>`
  ).join("");
  // The availability box and the sort menu reload the page with every other choice kept.
  const hidden = (skip: string) =>
    (["q", "category", "brand", "price", "stock", "sort"] as const)
      .filter((k) => k !== skip && filters[k] !== undefined && filters[k] !== "")
      .map((k) =>
        `<input type="hidden" name="${k}" value="${esc(k === "stock" ? "1" : String(filters[k]))}">`
      ).join("");
  const cards = items.map((p) =>
    `<li><h3><a href="/shop/p/${p.id}">${esc(p.title)}</a></h3>
<p>${esc(p.brand)} · Rated ${p.rating.toFixed(1)} out of 5 (${p.reviews} reviews)</p>
<p>${euros(p.cents)} · ${p.inStock ? "In stock" : "Out of stock"}</p>
<button type="button" data-add="${p.id}"${p.inStock ? "" : " disabled"}>Add to cart</button></li>`
  ).join("\n");
  const from = (n - 1) * SHOP_PAGE_SIZE + 1;
  const what = filters.q ? ` for “${esc(filters.q)}”` : "";
  const count = all.length
    ? `Showing ${from}–${from + items.length - 1} of ${all.length} results${what}`
    : `No products match${what}. Try fewer filters.`;
  const pager = Array.from(
    { length: pages },
    (_, i) =>
      i + 1 === n
        ? `<a href="${esc(shopHref({ ...query, page: i + 1 }))}" aria-current="page">${i + 1}</a>`
        : `<a href="${esc(shopHref({ ...query, page: i + 1 }))}">${i + 1}</a>`,
  );
  const prev = n > 1
    ? `<a href="${esc(shopHref({ ...query, page: n - 1 }))}" rel="prev">Previous page</a>`
    : "";
  const next = n < pages
    ? `<a href="${esc(shopHref({ ...query, page: n + 1 }))}" rel="next">Next page</a>`
    : "";
  const filtered = filters.category || filters.brand || filters.price || filters.stock;
  return page(
    filters.q ? `“${esc(filters.q)}”, page ${n} · Shop` : `Shop, page ${n}`,
    `<nav aria-label="Breadcrumb"><a href="/">Home</a> › <a href="/shop">Shop</a>${
      filters.q ? " › Search results" : ""
    }</nav>
<form role="search" action="/shop"><label>Search products <input type="search" name="q" value="${
      esc(filters.q)
    }"></label> <button type="submit">Search</button></form>
<p id="cart" role="status">Your cart is empty</p>
<aside aria-label="Filters"><h2>Filter results</h2>
<h3>Category</h3><ul>${facetList("category", "category")}</ul>
<h3>Brand</h3><ul>${facetList("brand", "brand")}</ul>
<h3>Price</h3><ul>${prices}</ul>
<h3>Availability</h3><form action="/shop">${
      hidden("stock")
    }<label><input type="checkbox" name="stock" value="1"${
      filters.stock ? " checked" : ""
    } onchange="this.form.submit()"> In stock only</label></form>
${
      filtered
        ? `<p><a href="${esc(shopHref({ q: filters.q, page: 1 }))}">Clear all filters</a></p>`
        : ""
    }
</aside>
<section aria-label="Results"><h1>${
      filters.q ? `Results for “${esc(filters.q)}”` : "All products"
    }</h1>
<p>${count}</p>
<form action="/shop">${
      hidden("sort")
    }<label>Sort by <select name="sort" onchange="this.form.submit()">${
      SHOP_SORTS.map((s) =>
        `<option value="${s.value}"${
          s.value === (filters.sort ?? "relevance") ? " selected" : ""
        }>${esc(s.label)}</option>`
      ).join("")
    }</select></label></form>
<ul>${cards}</ul>
<nav aria-label="Pagination">${prev} ${pager.join(" ")} ${next}</nav></section>
<script>
let inCart = 0;
document.querySelectorAll("[data-add]").forEach((b) => b.addEventListener("click", () => {
  inCart++;
  document.getElementById("cart").textContent = inCart + (inCart === 1 ? " item" : " items") + " in your cart";
}));
</script>`,
  );
}

function shopProductPage(id: number): Response {
  const p = shopCatalog().find((x) => x.id === id);
  if (!p) return new Response("not found", { status: 404 });
  return page(
    `${esc(p.title)} · Shop`,
    `<nav aria-label="Breadcrumb"><a href="/">Home</a> › <a href="/shop">Shop</a> › <a href="${
      esc(shopHref({ q: "", category: p.category, page: 1 }))
    }">${esc(p.category)}</a></nav>
<h1>${esc(p.title)}</h1><p>${esc(p.brand)} · ${euros(p.cents)} · ${
      p.inStock ? "In stock" : "Out of stock"
    }</p><button type="button"${p.inStock ? "" : " disabled"}>Add to cart</button>`,
  );
}

function widgetsPage(): Response {
  const tabs = [
    [
      "Description",
      `<p>A floor lamp for the reading corner: a slim brass-plated pole, a weighted base and a
linen shade that softens the light without dimming it. The foot dimmer sits where your foot
finds it in the dark.</p><p>Designed by Lumen in Lisbon and made in Portugal.</p>`,
    ],
    [
      "Specifications",
      `<table><tbody>${
        WIDGET_SPECS.map(([k, v]) => `<tr><th scope="row">${esc(k)}</th><td>${esc(v)}</td></tr>`)
          .join("")
      }</tbody></table>`,
    ],
    [
      "Delivery & returns",
      `<p>Free delivery in mainland Portugal and Spain within 3–5 working days. Return it
unused within 30 days for a full refund; we collect it free of charge.</p>`,
    ],
  ];
  const tabList = tabs.map(([name], i) =>
    `<button role="tab" id="tab-${i}" aria-controls="panel-${i}" aria-selected="${
      i === 0
    }" tabindex="${i === 0 ? 0 : -1}">${esc(name)}</button>`
  ).join("");
  const panels = tabs.map(([, body], i) =>
    `<div role="tabpanel" id="panel-${i}" aria-labelledby="tab-${i}"${
      i === 0 ? "" : " hidden"
    }>${body}</div>`
  ).join("\n");
  const faq = WIDGET_FAQ.map(([q, a], i) =>
    `<h3><button type="button" aria-expanded="false" aria-controls="faq-${i}">${
      esc(q)
    }</button></h3><div id="faq-${i}" hidden><p>${esc(a)}</p></div>`
  ).join("\n");
  const related = shopCatalog().filter((p) => p.category === "Lighting").slice(1, 5)
    .map((p) => `<li><a href="/shop/p/${p.id}">${esc(p.title)}</a> ${euros(p.cents)}</li>`)
    .join("");
  const reviews = widgetReviews();
  return page(
    "Halo floor lamp · Shop",
    `<nav aria-label="Breadcrumb"><a href="/">Home</a> › <a href="/shop">Shop</a> › <a href="/shop?category=Lighting">Lighting</a></nav>
<h1>Halo floor lamp</h1>
<p>by Lumen · Rated 4.4 out of 5 (${reviews.length} reviews)</p>
<p>€189.00 · In stock · Free delivery</p>
<fieldset><legend>Colour</legend><label><input type="radio" name="colour" checked> Brass</label>
<label><input type="radio" name="colour"> Black</label> <label><input type="radio" name="colour"> White</label></fieldset>
<label>Quantity <input type="number" name="qty" value="1" min="1" max="10"></label>
<button type="button">Add to cart</button> <button type="button">Add to wish list</button>
<section><div role="tablist" aria-label="Product information">${tabList}</div>
${panels}</section>
<section><h2>Questions and answers</h2>
${faq}</section>
<section><h2>Customer reviews</h2>
<p id="review-count">Showing ${REVIEWS_STEP} of ${reviews.length} reviews</p>
<ul id="reviews"></ul>
<button type="button" id="more">Load more reviews</button></section>
<section><h2>You may also like</h2><ul>${related}</ul></section>
<script>
const REVIEWS = ${JSON.stringify(reviews)};
const STEP = ${REVIEWS_STEP};
let shown = 0;
const esc = (s) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;");
function more() {
  const next = REVIEWS.slice(shown, shown + STEP);
  document.getElementById("reviews").insertAdjacentHTML("beforeend", next.map((r) =>
    '<li><h3>' + esc(r.title) + '</h3><p>' + r.stars + ' out of 5 stars · ' + esc(r.author) +
    ' · ' + r.date + '</p><p>' + esc(r.text) + '</p><button type="button">Helpful (' +
    r.helpful + ')</button></li>').join(""));
  shown += next.length;
  document.getElementById("review-count").textContent =
    "Showing " + shown + " of " + REVIEWS.length + " reviews";
  if (shown >= REVIEWS.length) document.getElementById("more").remove();
}
more();
document.getElementById("more").addEventListener("click", more);
const tabs = [...document.querySelectorAll('[role="tab"]')];
tabs.forEach((tab) => tab.addEventListener("click", () => {
  for (const t of tabs) {
    const on = t === tab;
    t.setAttribute("aria-selected", String(on));
    t.tabIndex = on ? 0 : -1;
    document.getElementById(t.getAttribute("aria-controls")).hidden = !on;
  }
}));
document.querySelectorAll("[aria-expanded]").forEach((b) => b.addEventListener("click", () => {
  const open = b.getAttribute("aria-expanded") !== "true";
  b.setAttribute("aria-expanded", String(open));
  document.getElementById(b.getAttribute("aria-controls")).hidden = !open;
}));
</script>`,
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
      case "/shop":
        return shopPageResponse(shopQueryOf(url.searchParams));
      case "/product/halo-floor-lamp":
        return widgetsPage();
      case "/news/article":
        return new Response(newsArticle().html, {
          headers: { "content-type": "text/html; charset=utf-8" },
        });
      case NEWS_FOLLOW_UP:
        return page(
          "Whale strandings: the season's count",
          `<h1>Whale strandings: the season's count</h1><p>${NEWS_FOLLOW_UP_TEXT}</p>`,
        );
      case "/favicon.ico":
        return new Response(null, { status: 204 });
      default:
        if (url.pathname.startsWith("/docs/")) return docsPage(url.pathname.slice(6));
        if (/^\/shop\/p\/\d+$/.test(url.pathname)) {
          return shopProductPage(Number(url.pathname.slice(8)));
        }
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
