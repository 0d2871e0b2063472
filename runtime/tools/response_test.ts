import assert from "node:assert/strict";
import { Redactor } from "../redact/mod.ts";
import { ResponseBuilder } from "./response.ts";

const PLANTED_PW = "Zk4Wq9Rt2Xm7Pv3Lh8Ns5Jd6";

function plantedRedactor(): Redactor {
  const r = new Redactor();
  r.add(PLANTED_PW);
  return r;
}

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
