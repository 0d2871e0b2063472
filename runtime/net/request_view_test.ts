import assert from "node:assert/strict";
import { BODY_ENTRY_NAME, BODY_TEXT_MAX } from "./form_body.ts";
import { type HeldRequestInput, requestView, type ShownEntry } from "./request_view.ts";

const SHA256_EMPTY = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
const SHA256_ABC = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
const enc = new TextEncoder();
const same = (s: string) => s;

function held(overrides: Partial<HeldRequestInput> & { text?: string } = {}): HeldRequestInput {
  const { text, ...rest } = overrides;
  return {
    method: "POST",
    url: "https://bank.test/transfer",
    contentType: "application/x-www-form-urlencoded",
    body: enc.encode(text ?? ""),
    ...rest,
  };
}

/** Entries as `[name, value]` texts. */
const pairs = (entries: ShownEntry[]) => entries.map((e) => [e.name.text, e.value.text]);

Deno.test("requestView() urlencoded vectors", () => {
  const view = requestView(
    held({ text: "a=1&b=hello+world&c=%E2%82%AC&&d&e=%ZZ&f=x%3Dy" }),
    same,
  );
  assert.equal(view.encoding, "urlencoded");
  assert.deepEqual(pairs(view.entries), [
    ["a", "1"],
    ["b", "hello world"],
    ["c", "€"],
    ["d", ""],
    ["e", "%ZZ"],
    ["f", "x=y"],
  ]);
  assert.equal(view.method, "POST");
  assert.equal(view.content_type, "application/x-www-form-urlencoded");
  assert.equal(view.size, 46);
  assert.match(view.sha256, /^[0-9a-f]{64}$/);
  assert.deepEqual(view.flags, []);
});

Deno.test("requestView() a GET has no body and shows its URL and query whole", () => {
  const url = "https://shop.test/search?q=red+shoes&page=2&tag=a&tag=b#frag";
  const view = requestView(held({ method: "GET", url, contentType: null }), same);
  assert.equal(view.encoding, "none");
  assert.deepEqual(view.entries, []);
  assert.equal(view.url.text, url);
  assert.equal(view.url.length, url.length);
  assert.deepEqual(pairs(view.query), [["q", "red shoes"], ["page", "2"], ["tag", "a"], [
    "tag",
    "b",
  ]]);
  assert.equal(view.content_type, null);
  assert.equal(view.size, 0);
  assert.equal(view.sha256, SHA256_EMPTY);
});

function multipart(boundary: string, parts: string[]): string {
  return parts.map((p) => `--${boundary}\r\n${p}\r\n`).join("") + `--${boundary}--\r\n`;
}

Deno.test("requestView() multipart vectors: fields and files by name, type, size and digest", () => {
  const boundary = "----WebKitFormBoundaryX3a9";
  const body = multipart(boundary, [
    'Content-Disposition: form-data; name="payee"\r\n\r\nAcme Ltd',
    'Content-Disposition: form-data; name="note"\r\n\r\nline one\r\nline two',
    'Content-Disposition: form-data; name="doc"; filename="invoice.pdf"\r\nContent-Type: application/pdf\r\n\r\nabc',
    'content-disposition: form-data; name="empty"; filename=""\r\n\r\n',
    "Content-Disposition: form-data; name=plain\r\n\r\n",
  ]);
  const view = requestView(
    held({ contentType: `multipart/form-data; boundary="${boundary}"`, text: body }),
    same,
  );
  assert.equal(view.encoding, "multipart");
  assert.deepEqual(pairs(view.entries), [
    ["payee", "Acme Ltd"],
    ["note", "line one\\r\\nline two"],
    ["doc", ""],
    ["empty", ""],
    ["plain", ""],
  ]);
  assert.deepEqual(view.entries[2].file, {
    filename: { text: "invoice.pdf", length: 11, flags: [] },
    content_type: "application/pdf",
    size: 3,
    sha256: SHA256_ABC,
  });
  assert.deepEqual(view.entries[3].file, {
    filename: { text: "", length: 0, flags: [] },
    content_type: "",
    size: 0,
    sha256: SHA256_EMPTY,
  });
  assert.equal(view.entries[0].file, undefined);
  assert.equal(view.size, enc.encode(body).length);
  // The file's bytes are never in the view.
  assert.ok(!JSON.stringify(view).includes('"abc"'));
});

Deno.test("requestView() malformed or ambiguous multipart bodies are opaque, shown as their text", () => {
  const b = "bnd";
  const ok = multipart(b, ['Content-Disposition: form-data; name="a"\r\n\r\n1']);
  const cases: [string, string, string][] = [
    ["no boundary", "multipart/form-data", ok],
    ["other boundary", "multipart/form-data; boundary=zzz", ok],
    // Servers disagree on where these boundaries end (PHP cuts at `,`, Rack takes the last).
    ["a comma in the boundary", `multipart/form-data; boundary=${b},x`, ok],
    ["a second boundary-named parameter", `multipart/form-data; boundary=${b}; xboundary=q`, ok],
    ["an equals sign in the boundary", `multipart/form-data; boundary="${b}=x"`, ok],
    ["a charset parameter", `multipart/form-data; boundary=${b}; charset=utf-7`, ok],
    ["preamble", `multipart/form-data; boundary=${b}`, `hidden\r\n${ok}`],
    ["epilogue", `multipart/form-data; boundary=${b}`, `${ok}hidden=1`],
    ["no close", `multipart/form-data; boundary=${b}`, ok.slice(0, -(b.length + 6))],
    [
      "junk after a delimiter",
      `multipart/form-data; boundary=${b}`,
      `--${b}\r\nContent-Disposition: form-data; name="a"\r\n\r\n1\r\n--${b}X\r\n--${b}--`,
    ],
    [
      "extra header",
      `multipart/form-data; boundary=${b}`,
      multipart(b, [
        'Content-Disposition: form-data; name="a"\r\nContent-Transfer-Encoding: base64\r\n\r\nMQ==',
      ]),
    ],
    [
      "backslash in a quoted name",
      `multipart/form-data; boundary=${b}`,
      multipart(b, ['Content-Disposition: form-data; name="a\\"; filename="x"\r\n\r\n1']),
    ],
    [
      "not form-data",
      `multipart/form-data; boundary=${b}`,
      multipart(b, ['Content-Disposition: attachment; name="a"\r\n\r\n1']),
    ],
    [
      "no name",
      `multipart/form-data; boundary=${b}`,
      multipart(b, ['Content-Disposition: form-data; filename="a"\r\n\r\n1']),
    ],
    [
      "filename*",
      `multipart/form-data; boundary=${b}`,
      multipart(b, ["Content-Disposition: form-data; name=a; filename*=UTF-8''x\r\n\r\n1"]),
    ],
    [
      "no blank line",
      `multipart/form-data; boundary=${b}`,
      `--${b}\r\nContent-Disposition: form-data; name="a"\r\n--${b}--\r\n`,
    ],
  ];
  for (const [label, contentType, text] of cases) {
    const view = requestView(held({ contentType, text }), same);
    assert.equal(view.encoding, "opaque", label);
    // Shown whole as text: what a server reads from it is there for the operator to read.
    assert.deepEqual(view.entries.map((e) => e.name.text), [BODY_ENTRY_NAME], label);
    assert.equal(view.size, enc.encode(text).length, label);
  }
  // The well-formed one, for contrast.
  const good = requestView(
    held({ contentType: `multipart/form-data; boundary=${b}`, text: ok }),
    same,
  );
  assert.deepEqual(pairs(good.entries), [["a", "1"]]);
});

Deno.test("requestView() text/plain form vectors", () => {
  const view = requestView(
    held({ contentType: "text/plain;charset=UTF-8", text: "a=1\r\nb=x=y\r\nc=\r\n" }),
    same,
  );
  assert.equal(view.encoding, "text");
  assert.deepEqual(pairs(view.entries), [["a", "1"], ["b", "x=y"], ["c", ""]]);

  // A large form is decoded whole too.
  const big = "x".repeat(BODY_TEXT_MAX);
  const large = requestView(held({ contentType: "text/plain", text: `memo=${big}\r\n` }), same);
  assert.equal(large.encoding, "text");
  assert.equal(large.entries[0].value.length, BODY_TEXT_MAX);

  // Not in the form shape: shown whole as an opaque body.
  const loose = requestView(held({ contentType: "text/plain", text: "just a note" }), same);
  assert.equal(loose.encoding, "opaque");
  assert.deepEqual(pairs(loose.entries), [[BODY_ENTRY_NAME, "just a note"]]);
});

Deno.test("requestView() JSON is opaque and shown whole as the (body) entry, bytes that are not UTF-8 flagged", () => {
  const json = '{"to":"acct-9","amount":100,"memo":"\u202Ex"}';
  const view = requestView(held({ contentType: "application/json", text: json }), same);
  assert.equal(view.encoding, "opaque");
  assert.deepEqual(pairs(view.entries), [[
    BODY_ENTRY_NAME,
    '{"to":"acct-9","amount":100,"memo":"\\u{202E}x"}',
  ]]);
  assert.deepEqual(view.flags, ["bidi"]);

  const binary = requestView(
    held({ contentType: "application/octet-stream", body: new Uint8Array([0xff, 0x00, 0xfe]) }),
    same,
  );
  assert.equal(binary.encoding, "opaque");
  assert.deepEqual(pairs(binary.entries), [[BODY_ENTRY_NAME, "\\u{FFFD}\\u{0000}\\u{FFFD}"]]);
  assert.deepEqual(binary.flags, ["control"]);
  assert.equal(binary.size, 3);

  const big = requestView(
    held({ contentType: "application/json", text: `"${"x".repeat(BODY_TEXT_MAX)}"` }),
    same,
  );
  assert.equal(big.encoding, "opaque");
  assert.deepEqual(big.entries, [], "too long to show whole: not shown cut");
  assert.equal(big.size, BODY_TEXT_MAX + 2);
});

Deno.test("requestView() an RTL-override, zero-width payee is escaped and flagged", () => {
  // Renders as "Acme Ltd" followed by reversed text; the bytes name someone else.
  const payee = "Acme\u200B Ltd\u202E9-tcca\u202C";
  const view = requestView(
    held({ text: new URLSearchParams({ payee, amount: "100" }).toString() }),
    same,
  );
  const [entry] = view.entries;
  assert.equal(entry.value.text, "Acme\\u{200B} Ltd\\u{202E}9-tcca\\u{202C}");
  assert.deepEqual(entry.value.flags, ["bidi", "invisible"]);
  assert.equal(entry.value.length, [...payee].length);
  assert.deepEqual(view.flags, ["bidi", "invisible"]);
  assert.ok(!/[\u200B\u202A-\u202E]/.test(JSON.stringify(view)));
});

Deno.test("requestView() shows 500 entries, all of them, in order", () => {
  const params = new URLSearchParams();
  for (let i = 0; i < 500; i++) params.append(`f${i}`, `v${i}`);
  const view = requestView(held({ text: params.toString() }), same);
  assert.equal(view.entries.length, 500);
  assert.deepEqual(view.entries[499].name.text, "f499");
  assert.deepEqual(view.entries[499].value.text, "v499");
});

Deno.test("requestView() a 100 KB value is present whole with its length", () => {
  const value = "é".repeat(50_000) + "z".repeat(50_000);
  const view = requestView(held({ text: `memo=${encodeURIComponent(value)}` }), same);
  assert.equal(view.entries[0].value.text, value);
  assert.equal(view.entries[0].value.length, 100_000);
});

Deno.test("requestView() a multi-select (one name repeated) shows every choice", () => {
  const view = requestView(held({ text: "acct=a1&acct=a2&acct=a3&x=1" }), same);
  assert.deepEqual(pairs(view.entries), [["acct", "a1"], ["acct", "a2"], ["acct", "a3"], [
    "x",
    "1",
  ]]);
});

Deno.test("requestView() redacts the URL, query, names, values, filenames and JSON bodies", () => {
  const secret = "hunter2-PW";
  const redact = (s: string) =>
    s.replaceAll(secret, "[redacted]").replaceAll(encodeURIComponent(secret), "[redacted]");
  const url = `https://bank.test/p/${secret}?token=${secret}&${secret}=1`;
  const form = requestView(
    held({ url, text: `password=${secret}&${secret}=x&note=my+${secret}+ok` }),
    redact,
  );
  const b = "bb";
  const multi = requestView(
    held({
      url,
      contentType: `multipart/form-data; boundary=${b}`,
      text: multipart(b, [
        `Content-Disposition: form-data; name="f"; filename="${secret}.txt"\r\nContent-Type: text/${secret}\r\n\r\n${secret}`,
      ]),
    }),
    redact,
  );
  const json = requestView(
    held({ url, contentType: "application/json", text: `{"pw":"${secret}"}` }),
    redact,
  );
  for (const view of [form, multi, json]) {
    const text = JSON.stringify(view);
    assert.ok(!text.includes(secret), text);
    assert.ok(!text.toLowerCase().includes(secret.toLowerCase()), text);
    assert.equal(view.url.text, "https://bank.test/p/[redacted]?token=[redacted]&[redacted]=1");
    assert.deepEqual(pairs(view.query), [["token", "[redacted]"], ["[redacted]", "1"]]);
  }
  assert.deepEqual(pairs(form.entries), [
    ["password", "[redacted]"],
    ["[redacted]", "x"],
    ["note", "my [redacted] ok"],
  ]);
  assert.equal(form.entries[0].value.length, "[redacted]".length);
  assert.equal(multi.entries[0].file?.filename.text, "[redacted].txt");
  assert.equal(multi.entries[0].file?.content_type, "text/[redacted]");
  assert.equal(json.entries[0].value.text, '{"pw":"[redacted]"}');
});
