/**
 * Red-team vectors (issue 19): what the operator is shown of a held write must not hide what
 * common servers read from the same bytes. Each vector once hid an entry; the view now shows
 * such a body whole as text, or flags what a server could read otherwise.
 *
 * The page needs to control the body bytes and the Content-Type parameters: a script write
 * (`fetch(action, {method: "POST", headers: {"Content-Type": CT}, body})`, offered to the
 * operator under `script_writes: confirm`, or as the "form" on a plain-http origin, where no
 * Sec-Fetch-* tells a fetch from a navigation). `multipart/form-data` with any parameters is a
 * CORS-safelisted Content-Type, so even a cross-origin no-cors fetch may send it.
 */
import assert from "node:assert/strict";
import { requestView } from "./request_view.ts";

const enc = new TextEncoder();
const id = (s: string) => s;

/** Rack's boundary rule (rack/lib/rack/multipart.rb, Rack 2 and 3). */
const RACK_MULTIPART = /^multipart\/.*boundary="?([^";,]+)"?/i;

/** PHP's boundary rule (main/rfc1867.c): first "boundary" substring, value cut at `,` or `;`. */
function phpBoundary(contentType: string): string | null {
  const at = contentType.toLowerCase().indexOf("boundary");
  if (at < 0) return null;
  const eq = contentType.indexOf("=", at);
  if (eq < 0) return null;
  let b = contentType.slice(eq + 1);
  if (b.startsWith('"')) return b.slice(1, b.indexOf('"', 1));
  const cut = b.search(/[,;]/);
  if (cut >= 0) b = b.slice(0, cut);
  return b;
}

/**
 * A minimal reading of a multipart body the way PHP's rfc1867.c and Rack's parser read it:
 * skip lines until one is exactly `--B`, read headers to the blank line, the value up to the
 * next `\r\n--B`; stop at a line that is not exactly `--B`.
 */
function serverEntries(body: string, b: string): [string, string][] {
  const out: [string, string][] = [];
  // The first line that is exactly `--B` (PHP find_boundary: strcmp; Rack: strip ==).
  let pos = body.startsWith(`--${b}\r\n`) ? 0 : body.indexOf(`\r\n--${b}\r\n`) + 2;
  if (pos < 0) return out;
  for (;;) {
    pos += b.length + 4; // past "--B\r\n"
    const headEnd = body.indexOf("\r\n\r\n", pos);
    const name = /name="([^"]*)"/.exec(body.slice(pos, headEnd))?.[1] ?? "";
    const valueEnd = body.indexOf(`\r\n--${b}`, headEnd + 4);
    out.push([name, body.slice(headEnd + 4, valueEnd)]);
    pos = valueEnd + 2;
    if (!body.startsWith(`--${b}\r\n`, pos)) return out; // `--B--`: the end
  }
}

Deno.test("requestView() attack: a boundary with a comma no longer hides an entry (PHP, Rack)", () => {
  // The view takes the whole token `AAA,BBB` as the boundary; PHP and Rack cut it at the
  // comma and use `AAA`. The part they read lives inside what the view shows as a file
  // (name, size and SHA-256 only, never its bytes).
  const contentType = "multipart/form-data; boundary=AAA,BBB";
  const body = [
    "--AAA,BBB",
    'Content-Disposition: form-data; name="payee"',
    "",
    "Acme Supplies Ltd",
    "--AAA,BBB",
    'Content-Disposition: form-data; name="invoice"; filename="invoice-0042.pdf"',
    "Content-Type: application/pdf",
    "",
    "--AAA",
    'Content-Disposition: form-data; name="payee"',
    "",
    "Mallory",
    "--AAA--",
    "--AAA,BBB--",
    "",
  ].join("\r\n");

  const view = requestView({
    method: "POST",
    url: "https://bank.example/transfer",
    contentType,
    body: enc.encode(body),
  }, id);

  // Not decoded into entries a server reads otherwise: the whole body is shown as text.
  assert.equal(view.encoding, "opaque");
  assert.ok(JSON.stringify(view).includes("Mallory"), "the operator sees what PHP reads");

  // What the server reads from the same bytes: payee = Mallory, nothing else.
  assert.equal(RACK_MULTIPART.exec(contentType)?.[1], "AAA");
  assert.equal(phpBoundary(contentType), "AAA");
  assert.deepEqual(serverEntries(body, "AAA"), [["payee", "Mallory"]]);
});

Deno.test("requestView() attack: a second 'boundary'-named parameter no longer picks a hidden boundary", () => {
  // View: parameter `boundary` = BBB. PHP: the first "boundary" substring (inside
  // "xboundary") = AAA. Rack: the greedy `.*boundary=` takes the last one = AAA too.
  const contentType = "multipart/form-data; boundary=BBB; xboundary=AAA";
  assert.equal(phpBoundary("multipart/form-data; xboundary=AAA; boundary=BBB"), "AAA");
  assert.equal(RACK_MULTIPART.exec(contentType)?.[1], "AAA");
  const body = [
    "--BBB",
    'Content-Disposition: form-data; name="payee"',
    "",
    "Acme Supplies Ltd",
    "--BBB",
    'Content-Disposition: form-data; name="invoice"; filename="invoice.pdf"',
    "",
    "--AAA",
    'Content-Disposition: form-data; name="payee"',
    "",
    "Mallory",
    "--AAA--",
    "--BBB--",
    "",
  ].join("\r\n");
  const view = requestView({
    method: "POST",
    url: "https://bank.example/transfer",
    contentType,
    body: enc.encode(body),
  }, id);
  assert.equal(view.encoding, "opaque");
  assert.ok(JSON.stringify(view).includes("Mallory"));
  assert.deepEqual(serverEntries(body, "AAA"), [["payee", "Mallory"]]);
});

Deno.test("requestView() attack: a charset parameter and bytes that are not UTF-8 are shown as such; `;` stays visible", () => {
  // Older Django (< 3.1.7: `[&;]`), Python < 3.9.2 parse_qs, Perl CGI.pm and Rack 2 query
  // strings (`[&;] *`) split on `;` too: the view shows one entry `note` =
  // "thanks;amount=9999", such servers see amount=9999 (the last `amount` wins in Django's
  // QueryDict.__getitem__ and PHP). The same holds for a form's own action query under a
  // POST form, which the page writes.
  const v1 = requestView({
    method: "POST",
    url: "https://shop.example/order",
    contentType: "application/x-www-form-urlencoded",
    body: enc.encode("amount=10&note=thanks;amount=9999"),
  }, id);
  assert.deepEqual(v1.entries.map((e) => [e.name.text, e.value.text]), [
    ["amount", "10"],
    ["note", "thanks;amount=9999"],
  ]);
  // Django decodes a urlencoded body with the Content-Type's charset (any Python codec): a
  // charset other than UTF-8 is not decoded into entries, the body is shown as it is.
  const v2 = requestView({
    method: "POST",
    url: "https://shop.example/order",
    contentType: "application/x-www-form-urlencoded; charset=utf-7",
    body: enc.encode("amount=1%2BADA-&payee=Acm%E9"),
  }, id);
  assert.equal(v2.encoding, "opaque");
  assert.deepEqual(v2.entries.map((e) => e.value.text), ["amount=1%2BADA-&payee=Acm%E9"]);
  // A byte that is not UTF-8 shows as an escaped, flagged U+FFFD.
  const v3 = requestView({
    method: "POST",
    url: "https://shop.example/order",
    contentType: "application/x-www-form-urlencoded",
    body: enc.encode("payee=Acm%E9"),
  }, id);
  assert.deepEqual(v3.entries.map((e) => e.value.text), ["Acm\\u{FFFD}"]);
  assert.deepEqual(v3.flags, ["control"]);
});

Deno.test("requestView() attack: one stray byte no longer blanks the body from the operator's view", () => {
  // A JSON write with one invalid UTF-8 byte inside a string: the view shows no text at all
  // (size and digest only), while servers decode leniently (Go's encoding/json, Node's
  // Buffer#toString, Python's errors="replace") and read every field.
  const body = new Uint8Array([
    ...enc.encode('{"to":"Mallory","amount":9999,"memo":"x'),
    0xff,
    ...enc.encode('"}'),
  ]);
  const v = requestView({
    method: "POST",
    url: "https://bank.example/api/transfer",
    contentType: "application/json",
    body,
  }, id);
  assert.equal(v.encoding, "opaque");
  assert.match(v.entries[0].value.text, /"to":"Mallory","amount":9999,"memo":"x\\u\{FFFD\}"/);
  assert.deepEqual(v.flags, ["control"]);

  // A multipart body with an RFC 2046 preamble (every server skips it) is "malformed" to the
  // view: opaque, and not even shown as text.
  const mp = enc.encode(
    'preamble\r\n--B\r\nContent-Disposition: form-data; name="to"\r\n\r\nMallory\r\n--B--\r\n',
  );
  const m = requestView({
    method: "POST",
    url: "https://bank.example/transfer",
    contentType: "multipart/form-data; boundary=B",
    body: mp,
  }, id);
  assert.equal(m.encoding, "opaque");
  assert.match(m.entries[0].value.text, /Mallory/);
  assert.deepEqual(serverEntries(new TextDecoder().decode(mp), "B"), [["to", "Mallory"]]);
});
