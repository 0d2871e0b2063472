import assert from "node:assert/strict";
import { PLANTED_PW, plantedRedactor } from "../../tests/helpers/planted_secret.ts";
import { Redactor } from "../redact/mod.ts";
import { ResponseBuilder } from "./response.ts";

/** A builder whose redactor knows no secret: what it is given is what it shows. */
const builder = () => new ResponseBuilder(new Redactor());

Deno.test("ResponseBuilder.serialize() redacts every piece: results, notices, errors, denials, snapshot", () => {
  const spaced = [...PLANTED_PW].join(" ");
  const out = new ResponseBuilder(plantedRedactor())
    .denied("R", `detail ${PLANTED_PW.toLowerCase()}`)
    .error("X", `quoted ${PLANTED_PW.toUpperCase()}`)
    .result(`result ${spaced}`)
    .notice(`notice ${PLANTED_PW.slice(2, 12)}`)
    .snapshot(`snapshot ${[...PLANTED_PW].join("\u200b")}`)
    .serialize();
  assert.equal(
    out.content[0].type === "text" ? out.content[0].text : "",
    [
      "denied: R (detail [redacted])",
      "error: X (quoted [redacted])",
      "result [redacted]",
      "notice: notice [redacted]",
      "",
      "snapshot [redacted]",
    ].join("\n"),
  );
  assert.equal(out.isError, true);
});

Deno.test("ResponseBuilder.serialize() leaves text without a secret as it is", () => {
  const out = new ResponseBuilder(plantedRedactor()).result("clicked e3").serialize();
  assert.deepEqual(out.content, [{ type: "text", text: "clicked e3" }]);
});

Deno.test("ResponseBuilder.serialize() of an empty builder is one empty text part, not an error", () => {
  assert.deepEqual(builder().serialize(), { content: [{ type: "text", text: "" }] });
});

Deno.test("ResponseBuilder.serialize() puts the images of a call that succeeded after its text, in order", () => {
  const out = builder()
    .image("AAAA", "image/png")
    .result("took a screenshot")
    .image("BBBB", "image/jpeg")
    .serialize();
  assert.deepEqual(out, {
    content: [
      { type: "text", text: "took a screenshot" },
      { type: "image", data: "AAAA", mimeType: "image/png" },
      { type: "image", data: "BBBB", mimeType: "image/jpeg" },
    ],
  });
  assert.equal("isError" in out, false);
});

Deno.test("ResponseBuilder.serialize() shows no image of a call that failed or was denied", () => {
  const failed = builder().image("AAAA", "image/png").error("TIMEOUT", "too slow").serialize();
  assert.deepEqual(failed, {
    content: [{ type: "text", text: "error: TIMEOUT (too slow)" }],
    isError: true,
  });
  const denied = builder().image("AAAA", "image/png").denied("ORIGIN_NOT_ALLOWED").serialize();
  assert.deepEqual(denied, {
    content: [{ type: "text", text: "denied: ORIGIN_NOT_ALLOWED" }],
    isError: true,
  });
});

Deno.test("ResponseBuilder.serialize() orders denial, error, results, notices, then the snapshot after a blank line", () => {
  const out = builder()
    .snapshot('- heading "Shop" [ref=e1]')
    .notice("a new tab opened")
    .result("clicked e3")
    .error("STALE_REF", "e3 is gone")
    .result("second line")
    .denied("READ_ONLY_SUBMIT", "POST form to https://shop.test/buy")
    .serialize();
  assert.equal(
    out.content[0].type === "text" ? out.content[0].text : "",
    [
      "denied: READ_ONLY_SUBMIT (POST form to https://shop.test/buy)",
      "error: STALE_REF (e3 is gone)",
      "clicked e3",
      "second line",
      "notice: a new tab opened",
      "",
      '- heading "Shop" [ref=e1]',
    ].join("\n"),
  );
  assert.equal(out.content.length, 1);
});

Deno.test("ResponseBuilder.serialize() keeps the last error and the last denial only", () => {
  const out = builder().error("A", "first").error("B", "second").denied("X").denied("Y", "why")
    .serialize();
  assert.equal(
    out.content[0].type === "text" ? out.content[0].text : "",
    "denied: Y (why)\nerror: B (second)",
  );
});

Deno.test("ResponseBuilder.serialize() redacts a denial reason given without detail", () => {
  const out = new ResponseBuilder(plantedRedactor()).denied(`R ${PLANTED_PW}`).serialize();
  assert.deepEqual(out, {
    content: [{ type: "text", text: "denied: R [redacted]" }],
    isError: true,
  });
});

Deno.test("ResponseBuilder.failed is true once error() or denied() was called, and only then", () => {
  assert.equal(builder().result("ok").notice("n").image("AAAA", "image/png").failed, false);
  assert.equal(builder().error("X", "m").failed, true);
  assert.equal(builder().denied("R").failed, true);
});

Deno.test("ResponseBuilder.wantsSnapshot is true once asked for, until a snapshot is set", () => {
  const b = builder();
  assert.equal(b.wantsSnapshot, false);
  b.includeSnapshot();
  assert.equal(b.wantsSnapshot, true);
  b.snapshot("");
  assert.equal(b.wantsSnapshot, false);
  // A view alone has no blank line before it; after a result line, one separates them.
  assert.deepEqual(b.serialize().content, [{ type: "text", text: "" }]);
  b.result("clicked e1");
  assert.deepEqual(b.serialize().content, [{ type: "text", text: "clicked e1\n\n" }]);
  // A snapshot set without being asked for is shown all the same.
  const unasked = builder().snapshot("- page").serialize();
  assert.deepEqual(unasked.content, [{ type: "text", text: "- page" }]);
});

Deno.test("ResponseBuilder.typedFields lists what each typing call typed, in order, and is not shown", () => {
  const b = builder().typed("e2", "alice").typed("e5", "hunter2").result("typed into e2 and e5");
  assert.deepEqual(b.typedFields, [{ ref: "e2", value: "alice" }, { ref: "e5", value: "hunter2" }]);
  assert.deepEqual(b.serialize().content, [{ type: "text", text: "typed into e2 and e5" }]);
});
