import assert from "node:assert/strict";
import { type HeldRequestInput, requestView } from "../../runtime/net/request_view.ts";
import type { ApprovalView } from "../ports.ts";
import { approvalsTable, FOLD_AT } from "./approvals_page.ts";

const enc = new TextEncoder();
/** Any raw character that hides or reorders text. */
const HIDDEN_RAW = /[\u061C\u200B-\u200F\u202A-\u202E\u2066-\u2069\uFEFF\u00AD]/;

function approval(
  input: Partial<HeldRequestInput> & { text?: string },
  overrides: Partial<ApprovalView> = {},
): ApprovalView {
  const { text, ...rest } = input;
  return {
    id: "ap-1",
    agent: "alice",
    session: "s-1",
    origin: "https://bank.test",
    method: "POST",
    kind: "form",
    request: requestView({
      method: "POST",
      url: "https://bank.test/transfer",
      contentType: "application/x-www-form-urlencoded",
      body: enc.encode(text ?? ""),
      ...rest,
    }, (s) => s),
    created_at: "2025-06-01T00:00:00.000Z",
    expires_at: "2025-06-01T00:02:00.000Z",
    state: "pending",
    ...overrides,
  };
}

const render = (a: ApprovalView) => approvalsTable([a], [], "csrf-1").value;

Deno.test("approvalsTable() renders an approval with 300 entries, every one", () => {
  const params = new URLSearchParams();
  for (let i = 0; i < 300; i++) params.append(`field${i}`, `value${i}`);
  const page = render(approval({ text: params.toString() }));
  assert.match(page, /form, urlencoded, 300 entries/);
  assert.equal(page.match(/<dt>/g)?.length, 300);
  for (let i = 0; i < 300; i++) {
    assert.ok(page.includes(`>field${i}<`), `field${i}`);
    assert.ok(page.includes(`>value${i}<`), `value${i}`);
  }
});

Deno.test("approvalsTable() shows the method, kind, whole URL and every query entry", () => {
  const url = "https://shop.test/buy?item=a&item=b&note=two+words";
  const page = render(approval({ method: "GET", url, contentType: null }, { kind: "script" }));
  assert.match(page, /<strong>GET<\/strong> <span class="muted">script request \(fetch\/XHR\)/);
  assert.ok(page.includes(url.replaceAll("&", "&amp;")));
  assert.match(page, /Query: 3 entries/);
  assert.match(page, />item<.*>a<.*>item<.*>b<.*>note<.*>two words</s);
  assert.match(page, /No body\./);
});

Deno.test("approvalsTable() folds a long value, says its length and holds all of it", () => {
  const value = "0123456789".repeat(1_000) + "END";
  const page = render(approval({ text: `memo=${value}&x=short` }));
  const fold =
    /<details class="fold" data-fold="ap-1:b:0:v">\s*<summary><span class="shown">([^<]*)<\/span>… \((\d+) characters\)<\/summary>\s*<div class="shown whole">([^<]*)<\/div>\s*<\/details>/
      .exec(page);
  assert.ok(fold, "the value is folded");
  assert.equal(fold[1], value.slice(0, FOLD_AT));
  assert.equal(Number(fold[2]), value.length);
  assert.equal(fold[3], value, "the whole value is inside");
  assert.ok(page.includes(`<span class="shown">short</span>`), "a short value is not folded");
});

Deno.test("approvalsTable() a fold never splits an escape", () => {
  const value = "a".repeat(FOLD_AT - 1) + "\u202E" + "b".repeat(300);
  const page = render(approval({ text: new URLSearchParams({ v: value }).toString() }));
  const summary = /<summary><span class="shown flagged">(.*?)<\/span>…/.exec(page)?.[1] ?? "";
  assert.ok(summary.endsWith(`<mark class="esc">\\u{202E}</mark>`), summary);
});

Deno.test("approvalsTable() an RTL-override, zero-width payee shows as flagged escapes", () => {
  const payee = "Acme\u200B Ltd\u202E9-tcca\u202C";
  const page = render(approval({ text: new URLSearchParams({ payee }).toString() }));
  assert.equal(HIDDEN_RAW.test(page), false, "no raw bidi or invisible character");
  assert.ok(
    page.includes(
      `Acme<mark class="esc">\\u{200B}</mark> Ltd<mark class="esc">\\u{202E}</mark>9-tcca<mark class="esc">\\u{202C}</mark>`,
    ),
  );
  assert.match(page, /<tr data-pending="ap-1" class="flagged">/);
  assert.match(page, /<span class="badge">⚠ invisible\/bidi characters<\/span>/);
  assert.match(page, /<span class="flag"[^>]*>⚠ bidi, invisible<\/span>/);
});

Deno.test("approvalsTable() a forged escape is shown as plain text, not highlighted", () => {
  const page = render(
    approval({ text: new URLSearchParams({ payee: "Bob\\u{202E}" }).toString() }),
  );
  assert.ok(page.includes("Bob\\\\u{202E}"));
  assert.equal(page.includes(`<mark class="esc">`), false);
  assert.match(page, /<tr data-pending="ap-1" class="">/);
});

Deno.test("approvalsTable() a raw hidden character in a page-made field is escaped anyway", () => {
  const page = render(approval({ text: "a=1" }, { origin: "https://bank.test\u202Eevil" }));
  assert.equal(HIDDEN_RAW.test(page), false);
  assert.ok(page.includes("https://bank.test\\u{202E}evil"));
});

Deno.test("approvalsTable() an opaque body shows its content type, size and digest", () => {
  const binary = render(approval({
    contentType: "application/octet-stream",
    body: new Uint8Array([0xff, 0xfe, 0x00]),
  }));
  assert.match(
    binary,
    /Body: not form data <span class="muted">\(application\/octet-stream, 3 bytes, sha256 <code>[0-9a-f]{64}<\/code>\)/,
  );
  // Shown as text, every byte that is not UTF-8 an escaped, flagged U+FFFD.
  assert.ok(binary.includes("\\u{FFFD}"));
  const big = render(approval({
    contentType: "application/octet-stream",
    body: new Uint8Array(300 * 1024),
  }));
  assert.match(big, /Not shown: too large/);
  const json = render(approval({ contentType: "application/json", text: '{"to":"acct-9"}' }));
  assert.match(
    json,
    /<dt><span class="shown">\(body\)<\/span><\/dt>\s*<dd><span class="shown">\{&quot;to&quot;:&quot;acct-9&quot;\}<\/span><\/dd>/,
  );
});

Deno.test("approvalsTable() a file part shows its name, type, size and digest", () => {
  const body = `--b\r\nContent-Disposition: form-data; name="doc"; filename="inv.pdf"\r\n` +
    `Content-Type: application/pdf\r\n\r\nabc\r\n--b--\r\n`;
  const page = render(approval({ contentType: "multipart/form-data; boundary=b", text: body }));
  assert.match(page, /form, multipart, 1 entry/);
  assert.match(
    page,
    /file <span class="shown">inv\.pdf<\/span> <span class="muted">\(application\/pdf, 3 bytes, sha256 <code>ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad<\/code>\)/,
  );
});

Deno.test("approvalsTable() a decided row shows the method and the URL, escaped", () => {
  const a = approval({ url: "https://bank.test/p?x=\u202E" }, {
    state: "approved",
    decided_at: "2025-06-01T00:01:00.000Z",
    decided_by: "console",
  });
  const page = approvalsTable([], [a], "csrf-1").value;
  assert.match(page, /<td class="state-approved">approved<\/td>/);
  assert.ok(page.includes(`https://bank.test/p?x=<mark class="esc">\\u{202E}</mark>`));
  assert.equal(HIDDEN_RAW.test(page), false);
});
