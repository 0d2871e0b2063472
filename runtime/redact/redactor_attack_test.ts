/**
 * Red-team cases (issue 19): each test asserts the promise ("a secret never reaches output,
 * whole or in part, in any encoding"); each once failed, showing the leaked text.
 */
import assert from "node:assert/strict";
import { Redactor } from "./redactor.ts";
import { redactClip } from "./cut.ts";
import { tabLine } from "../tools/tabs.ts";
import { PageLog } from "../browser/page_log.ts";
import { FakeHost, fakeTarget } from "../../tests/helpers/fake_target.ts";

function leaks(out: string, pieces: string[]): string[] {
  const lower = out.toLowerCase();
  return pieces.filter((p) => lower.includes(p.toLowerCase()));
}

// 1. The browser's own URL serializer (WHATWG path set) percent-encodes a space but leaves
//    `|` alone; encodeURI/encodeURIComponent encode both. No listed form matches, and the
//    inserted "20" breaks every 8-character run of the skeleton. The tab line shows the
//    whole password, trivially decodable.
Deno.test("Redactor.redact() attack: password in a URL path as Chromium serializes it (space + |)", () => {
  const secret = "Tr0ub|4d or3x";
  const r = new Redactor();
  r.add([secret]);
  // What CDP reports for location = "/p/" + secret (Chromium and WHATWG agree on these).
  const url = new URL("https://site.test/p/" + secret).href; // .../p/Tr0ub|4d%20or3x
  const line = tabLine({ index: 0, current: true, title: "t", url }, r);
  assert(!line.includes("Tr0ub|4d%20or3x"), `leaked: ${line}`);
});

// 2. The special-query percent-encode set encodes `'` but not `!`; every listed encoder
//    either keeps both or encodes both.
Deno.test("Redactor.redact() attack: password in a query as the URL parser serializes it (' and !)", () => {
  const secret = "Ab'1!Cd'2!Ef'3";
  const r = new Redactor();
  r.add([secret]);
  const href = new URL("https://site.test/?q=" + secret).href; // ?q=Ab%271!Cd%272!Ef%273
  const out = r.redact(href);
  assert(!out.includes("Ab%271!Cd%272!Ef%273"), `leaked: ${out}`);
});

// 3. Punycode: a host holding a non-ASCII password is shown by Chromium (and new URL) as
//    xn--...; the ASCII letters keep their order but lose the accented ones, so no run of 8
//    survives. Punycode is reversible: the model can decode the whole password.
Deno.test("Redactor.redact() attack: non-ASCII password in a host name, as punycode", () => {
  const secret = "pässwörd123";
  const r = new Redactor();
  r.add([secret]);
  const url = new URL(`https://${secret}.evil.test/`).href;
  const line = tabLine({ index: 0, current: true, title: "t", url }, r);
  assert(!line.includes("xn--"), `leaked (punycode decodes to the password): ${line}`);
});

// 4. Redact-before-cut's bounded read is counted in raw characters, but the rewrite
//    collapses whitespace afterwards: a page pads a name/value with whitespace so the
//    bound falls inside the password; the 7 characters before the bound are not a run of 8,
//    are not redacted, and whitespace collapse brings them into view.
Deno.test("Redactor.redact() attack: whitespace padding moves the bounded read's cut into view (redactClip)", () => {
  const secret = "Hunter22Secret";
  const r = new Redactor();
  r.add([secret]);
  const max = 120;
  const limit = max * 4 + 256;
  const text = " ".repeat(limit - 7) + secret; // bound falls after "Hunter2"
  const out = redactClip(text, max, r);
  assert(leaks(out, ["Hunter2"]).length === 0, `leaked: ${JSON.stringify(out)}`);
});

// 5. The real console path: the URL scrub (a rewrite, after redaction) drops a long query,
//    which shortens the text, so the far end of the bounded read (500*4+256 characters),
//    where 7 characters of the password were left unredacted, comes into view. No
//    whitespace trick: one long URL before the password in a console.log.
Deno.test("Redactor.redact() attack: console.log(longUrl + password): URL scrub exposes the bounded read's tail", () => {
  const secret = "Hunter22Secret";
  const r = new Redactor();
  r.add([secret]);
  const log = new PageLog({}, Date.now, r);
  const host = new FakeHost();
  const { target, session } = fakeTarget(host, "page", "tab-1");
  log.watch(target);
  const head = "https://cdn.test/x?";
  const pad = "q".repeat(500 * 4 + 256 - head.length - 1 - 7);
  session.dispatch("Runtime.consoleAPICalled", {
    type: "log",
    args: [{ type: "string", value: `${head}${pad} ${secret}` }],
    executionContextId: 1,
    timestamp: 1,
  });
  const out = log.render("tab-1", {}, "0123456789abcdef");
  assert(leaks(out, ["Hunter2"]).length === 0, `leaked: ${out}`);
});
