/**
 * A small bundled demo shop so a newcomer can connect an agent at once.
 *
 * @module
 */
import { Hono } from "hono";
import { html, raw } from "hono/html";

interface Product {
  id: number;
  name: string;
  price: number;
  blurb: string;
}

const PRODUCTS: Product[] = [
  { id: 1, name: "Trail lantern", price: 34, blurb: "A rechargeable lantern for long nights." },
  { id: 2, name: "Camp stove", price: 59, blurb: "Two burners, folds flat." },
  { id: 3, name: "Water filter", price: 22, blurb: "Filters a litre a minute." },
];

function page(title: string, body: ReturnType<typeof html>) {
  return html`
    <!doctype html>
    <html lang="en">
      <head>
        <meta charset="utf-8">
        <title>${title} · Omotai demo shop</title>
        <style>body{font-family:sans-serif;max-width:44rem;margin:2rem auto}nav a{margin-right:1rem}</style>
      </head>
      <body>
    <nav><a href="/">Home</a><a href="/products">Products</a><a href="/search">Search</a><a href="/contact">Contact</a></nav>
    ${body}
      </body>
    </html>
  `;
}

/** Builds the demo site app. */
export function createDemoSite(): Hono {
  const app = new Hono();
  const messages: { name: string }[] = [];
  app.get("/", (c) =>
    c.html(page(
      "Home",
      html`<h1>Omotai demo shop</h1>
<p>Outdoor gear for agents that browse safely. Try the <a href="/products">product list</a>
or search below.</p>
<form action="/search" method="get" role="search"><label>Search <input name="q"></label>
<button>Search</button></form>
<h2>Newsletter</h2>
<iframe src="/widget" title="Newsletter widget" width="400" height="120"></iframe>`,
    )));
  app.get("/products", (c) =>
    c.html(page(
      "Products",
      html`
        <h1>Products</h1>
        <ul>${PRODUCTS.map((p) =>
          html`<li><a href="/products/${p.id}">${p.name}</a> · $${p.price}</li>`
        )}</ul>
      `,
    )));
  app.get("/products/:id", (c) => {
    const p = PRODUCTS.find((x) => String(x.id) === c.req.param("id"));
    if (!p) return c.html(page("Not found", html`<h1>No such product</h1>`), 404);
    return c.html(page(
      p.name,
      html`
        <h1>${p.name}</h1>
        <p>${p.blurb}</p>
        <p>Price: $${p.price}</p>
        <form action="/cart" method="post"><input type="hidden" name="id" value="${p.id}">
        <label>Colour <select name="colour"><option>Green</option><option>Orange</option></select></label>
        <label>Quantity <input type="number" name="qty" value="1" min="1"></label>
        <button>Add to cart</button></form>
      `,
    ));
  });
  app.post("/cart", async (c) => {
    const form = await c.req.formData();
    const p = PRODUCTS.find((x) => String(x.id) === form.get("id"));
    return c.html(page(
      "Cart",
      html`
        <h1>Cart</h1>
        <p>${p ? `${form.get("qty")} × ${p.name}` : "Nothing added"}</p>
      `,
    ));
  });
  app.get("/search", (c) => {
    const q = (c.req.query("q") ?? "").toLowerCase();
    const hits = q ? PRODUCTS.filter((p) => p.name.toLowerCase().includes(q)) : [];
    return c.html(page(
      "Search",
      html`<h1>Search</h1><form action="/search"><label>Search <input name="q" value="${q}"></label>
<button>Search</button></form>
${
        q
          ? html`
            <p>${hits.length} result(s)</p>
            <ul>${hits.map((p) => html`<li><a href="/products/${p.id}">${p.name}</a></li>`)}</ul>
          `
          : ""
      }`,
    ));
  });
  app.get("/contact", (c) =>
    c.html(page(
      "Contact",
      html`
        <h1>Contact us</h1>
        <form action="/contact" method="post">
        <label>Name <input name="name" autocomplete="name"></label>
        <label>Message <textarea name="message"></textarea></label><button>Send</button></form>
      `,
    )));
  app.post("/contact", async (c) => {
    const form = await c.req.formData();
    messages.push({ name: String(form.get("name") ?? "") });
    return c.html(page(
      "Thanks",
      html`
        <h1>Thanks!</h1>
        <p>We read every message.</p>
      `,
    ));
  });
  app.get("/widget", (c) =>
    c.html(
      html`
        <!doctype html>
        <html>
          <body><p>${raw(
            "Get our <b>weekly</b> tips.",
          )}</p><label>Email <input type="email" name="email"></label><button>Subscribe</button></body>
        </html>
      `,
    ));
  return app;
}
