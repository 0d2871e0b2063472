/**
 * The model's text never lands in a password field (issue 19, item 6) unless the policy
 * says `model_may_type_passwords: true`: browser_type, browser_press_key, browser_fill_form
 * (and browser_select_option, which types nothing) against a plain password field, one a
 * button turns into a password field after the snapshot, one that turns as it takes the
 * focus, open and closed shadow roots, and same-origin and cross-origin frames. Each
 * refusal is `PASSWORD_FIELD`, audited as a deny, with nothing typed.
 */
import assert from "node:assert/strict";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { parsePolicy } from "../runtime/policy/policy_file.ts";
import { keyMayType } from "../runtime/tools/facts.ts";
import { toolSettingsFrom } from "../runtime/tools/settings.ts";
import {
  agentTransport,
  type CallOutcome,
  eventually,
  refOf,
  startTestRuntime,
  TestClient,
} from "./helpers/harness.ts";
import { servePasswordSite } from "./fixtures/password_site.ts";

/** What the model asks to type; it must never reach a password field (by default). */
const TYPED = "Model-Typed-Passw0rd-9d41";
const REFUSED = /^error: PASSWORD_FIELD \(/;

/** What one case sees: the home page loaded for it, and what reached the site or the audit since. */
interface Case {
  /** The home page's snapshot, taken as the case began. */
  home: string;
  /** The values that reached fields with these ids during this case. */
  valuesOf(...fields: string[]): string[];
  /** Every value that reached a field during this case. */
  typed(): string[];
  /** Action rows of this case denied with PASSWORD_FIELD, by kind. */
  refusals(kind: string): Promise<number>;
  /** The texts the client received during this case. */
  outputs(): string;
}

/**
 * A runtime whose policy allows the password site (plus `extra`), and one session. The cases
 * of a test share it: each begins with `fresh()`, which loads the home page anew in a new tab
 * (a field an earlier case turned into a password field, or focused, is back as served) and counts
 * values, refusals and outputs from there, so what one case left cannot count for another.
 */
async function world(extra = "") {
  const site = servePasswordSite();
  const dataDir = await Deno.makeTempDir({ prefix: "omotai-password-" });
  const runtime = await startTestRuntime(
    dataDir,
    `allowed_origins: [${site.origin}, ${site.otherOrigin}]\n${extra}`,
  );
  const client = new Client({ name: "password-test", version: "0" });
  await client.connect(await agentTransport(runtime));
  const c = new TestClient(client);
  const refusals = async (kind: string) =>
    (await runtime.audit.rows()).filter((r) =>
      r.source === "action" && r.kind === kind && r.decision === "deny" &&
      r.reason === "PASSWORD_FIELD"
    ).length;
  let started = false;
  return {
    site,
    runtime,
    c,
    async fresh(): Promise<Case> {
      const typedFrom = site.typed.length;
      const outputsFrom = c.outputs.length;
      const before = new Map<string, number>();
      for (const kind of ["type", "key"]) before.set(kind, await refusals(kind));
      // A fresh tab: the home page's first view is then whole, never folded against the
      // one an earlier case saw, and nothing of that case's page lives on.
      if (started) {
        const closed = await c.call("browser_close");
        assert.equal(closed.isError, false, closed.text);
      }
      started = true;
      const home = await c.call("browser_navigate", { url: `${site.origin}/` });
      assert.equal(home.isError, false, home.text);
      // The frames' fields must be in the snapshot before the test takes their refs.
      assert.match(home.text, /password "Cross secret"/, home.text);
      const typed = () => site.typed.slice(typedFrom);
      return {
        home: home.text,
        typed: () => typed().map((t) => t.value),
        valuesOf: (...fields: string[]) =>
          typed().filter((t) => fields.includes(t.field)).map((t) => t.value),
        refusals: async (kind: string) => (await refusals(kind)) - before.get(kind)!,
        outputs: () => c.outputs.slice(outputsFrom).join("\n"),
      };
    },
    async [Symbol.asyncDispose]() {
      await c[Symbol.asyncDispose]();
      await runtime[Symbol.asyncDispose]();
      await site[Symbol.asyncDispose]();
      await Deno.remove(dataDir, { recursive: true }).catch(() => {});
    },
  };
}

const PASSWORD_IDS = ["secret", "flip", "sneaky", "open-secret", "closed-host", "frame-secret"];

function ok(r: CallOutcome): CallOutcome {
  assert.equal(r.isError, false, r.text);
  return r;
}

/**
 * Gives the page's input reports time to reach the site: a fixed wait on purpose where a test
 * proves that nothing reached a field (a condition cannot show that nothing will arrive).
 * Where only arrivals are checked, the tests wait for them instead (`eventually`).
 */
const settle = () => new Promise((r) => setTimeout(r, 300));

Deno.test("browser_type, browser_press_key, browser_fill_form and browser_select_option over one session of a runtime that keeps the model out of password fields", async (t) => {
  await using w = await world();
  await t.step(
    "browser_type refuses every password field with PASSWORD_FIELD, audited, typing nothing",
    async (t) => {
      const p = await w.fresh();
      const type = (label: RegExp) =>
        w.c.call("browser_type", { ref: refOf(p.home, label), text: TYPED });

      await t.step("a text field still types (the control)", async () => {
        assert.match(ok(await type(/textbox "Name"/)).text, /^typed into e\d+$/m);
      });
      await t.step("input type=password", async () => {
        const r = await type(/password "Secret"/);
        assert.match(r.text, REFUSED);
        assert.match(r.text, /e\d+ is a password field: .*nothing was typed\)/);
      });
      await t.step(
        "a field turned into a password field after the snapshot took its ref",
        async () => {
          ok(
            await w.c.call("browser_click", {
              ref: refOf(p.home, /button "Make Flip a password"/),
            }),
          );
          assert.match((await type(/textbox "Flip"/)).text, REFUSED);
        },
      );
      await t.step("a field that turns into a password field as it takes the focus", async () => {
        const before = await p.refusals("type");
        const r = await type(/textbox "Sneaky"/);
        assert.match(
          r.text,
          /^error: PASSWORD_FIELD \(e\d+ is a password field as it takes the focus/,
        );
        // Allowed on the facts (a text field then), refused at action time: both rows exist.
        assert.equal(await p.refusals("type"), before + 1);
      });
      for (
        const [name, label] of [
          ["an open shadow root", /password "Open secret"/],
          ["a closed shadow root", /password "Closed secret"/],
          ["a same-origin frame", /password "Same secret"/],
          ["a cross-origin frame", /password "Cross secret"/],
        ] as const
      ) {
        await t.step(`a password field in ${name}`, async () => {
          assert.match((await type(label)).text, REFUSED);
        });
      }
      await t.step("a text field in a cross-origin frame still types (the control)", async () => {
        ok(await type(/textbox "Cross name"/));
      });

      // A fixed wait (settle): it also proves that nothing reached a password field.
      await settle();
      assert.deepEqual(p.valuesOf(...PASSWORD_IDS), [], "nothing reached a password field");
      assert.deepEqual(p.valuesOf("name", "frame-name"), [TYPED, TYPED]);
      assert.equal(await p.refusals("type"), 7, "each refusal is an audited deny");
      assert.ok(!p.outputs().includes(TYPED), "the text is never echoed");
    },
  );
  await t.step(
    "browser_press_key refuses keys that type into a focused password field; keys that type nothing run",
    async (t) => {
      const p = await w.fresh();
      const focus = async (label: RegExp) =>
        ok(await w.c.call("browser_click", { ref: refOf(p.home, label) }));
      const press = (key: string) => w.c.call("browser_press_key", { key });

      await t.step(
        "in input type=password: characters, Space and shortcuts are refused",
        async () => {
          await focus(/password "Secret"/);
          for (
            const key of ["a", "A", "Shift+B", "Space", "Control+v", "Meta+v", "Alt+x", "Control+z"]
          ) {
            const r = await press(key);
            assert.match(r.text, REFUSED, key);
            assert.match(r.text, /the focused element is a password field/, key);
          }
          // Keys that type nothing of the model's still run there.
          // Shift+Tab goes back to Name, Tab to Secret again, Tab on to Flip.
          for (const key of ["Backspace", "ArrowLeft", "Escape", "Shift+Tab", "Tab", "Tab"]) {
            ok(await press(key));
          }
        },
      );
      await t.step("Tab moved the focus to a text field: characters type there", async () => {
        // Secret → Flip (a text field in this session).
        ok(await press("b"));
      });
      for (
        const [name, label] of [
          ["a field that turns into one as it takes the focus", /textbox "Sneaky"/],
          ["an open shadow root", /password "Open secret"/],
          ["a closed shadow root", /password "Closed secret"/],
          ["a same-origin frame", /password "Same secret"/],
        ] as const
      ) {
        await t.step(`a focused password field in ${name}`, async () => {
          await focus(label);
          assert.match((await press("c")).text, /^error: PASSWORD_FIELD \(the focused element/);
        });
      }
      await t.step("a text field in a same-origin frame takes characters", async () => {
        await focus(/textbox "Same name"/);
        ok(await press("d"));
      });
      await t.step(
        "focus in a cross-origin frame cannot be read: characters are refused",
        async () => {
          await focus(/textbox "Cross name"/);
          const r = await press("e");
          assert.match(
            r.text,
            /^error: PASSWORD_FIELD \(the focus is in a frame the runtime cannot read/,
          );
          ok(await press("Tab"));
        },
      );

      // A fixed wait (settle): refused keys came after the allowed ones, so this proves none of
      // them reached a field.
      await settle();
      // Flip stays a text field in this session.
      const passwords = PASSWORD_IDS.filter((id) => id !== "flip");
      assert.deepEqual(p.valuesOf(...passwords), [], "no key reached a password field");
      assert.deepEqual(p.valuesOf("flip", "frame-name"), ["b", "d"]);
      const keyRefusals = await p.refusals("key");
      assert.ok(keyRefusals >= 13, `${keyRefusals} audited refusals`);
    },
  );
  await t.step(
    "browser_fill_form and browser_select_option put no text into a password field",
    async () => {
      const p = await w.fresh();
      const field = (label: RegExp, type = "textbox") => ({
        name: "f",
        type,
        ref: refOf(p.home, label),
        value: TYPED,
      });
      for (
        const fields of [
          [field(/textbox "Name"/), field(/password "Secret"/)],
          [field(/password "Closed secret"/, "slider")],
          [field(/password "Cross secret"/)],
        ]
      ) {
        const r = await w.c.call("browser_fill_form", { fields });
        assert.match(
          r.text,
          /^error: PASSWORD_FIELD \(e\d+ is a password field: .*nothing was filled\)$/,
        );
      }
      ok(await w.c.call("browser_click", { ref: refOf(p.home, /button "Make Flip a password"/) }));
      const flipped = await w.c.call("browser_fill_form", { fields: [field(/textbox "Flip"/)] });
      assert.match(flipped.text, REFUSED);
      // A text field when resolved, a password field once focused: refused at action time.
      const sneaky = await w.c.call("browser_fill_form", { fields: [field(/textbox "Sneaky"/)] });
      assert.match(
        sneaky.text,
        /^error: PASSWORD_FIELD \(e\d+ is a password field as it takes the focus/,
      );
      const select = await w.c.call("browser_select_option", {
        ref: refOf(p.home, /password "Secret"/),
        values: [TYPED],
      });
      assert.match(select.text, /^error: NOT_A_SELECT/);
      // A drag drops selected text as typing would: a password field is no drop target.
      const drag = await w.c.call("browser_drag", {
        startElement: "name",
        startRef: refOf(p.home, /textbox "Name"/),
        endElement: "secret",
        endRef: refOf(p.home, /password "Secret"/),
      });
      assert.match(
        drag.text,
        /^error: PASSWORD_FIELD \(e\d+ is a password field \(a drop onto it types\)/,
      );
      await settle();
      assert.deepEqual(p.typed(), [], "not one field was filled");
      assert.equal(await p.refusals("type"), 5);
    },
  );
});

Deno.test("model_may_type_passwords: true lets browser_type, browser_press_key and browser_fill_form fill password fields", async () => {
  await using w = await world("model_may_type_passwords: true\n");
  const p = await w.fresh();
  const typed = ok(
    await w.c.call("browser_type", { ref: refOf(p.home, /password "Secret"/), text: TYPED }),
  );
  assert.match(typed.text, /^typed into e\d+ \(password field\)$/m);
  ok(
    await w.c.call("browser_type", { ref: refOf(p.home, /textbox "Sneaky"/), text: TYPED }),
  );
  ok(
    await w.c.call("browser_fill_form", {
      fields: [{
        name: "s",
        type: "textbox",
        ref: refOf(p.home, /password "Open secret"/),
        value: TYPED,
      }],
    }),
  );
  ok(await w.c.call("browser_click", { ref: refOf(p.home, /textbox "Cross name"/) }));
  ok(await w.c.call("browser_press_key", { key: "x" }));
  ok(await w.c.call("browser_click", { ref: refOf(p.home, /password "Same secret"/) }));
  ok(await w.c.call("browser_press_key", { key: "y" }));
  assert.ok(
    await eventually(() =>
      p.valuesOf("secret", "sneaky", "open-secret").length >= 3 &&
      p.valuesOf("frame-name", "frame-secret").length >= 2
    ),
    "the typed values reached the site",
  );
  assert.deepEqual(p.valuesOf("secret", "sneaky", "open-secret"), [TYPED, TYPED, TYPED]);
  assert.deepEqual(p.valuesOf("frame-name", "frame-secret"), ["x", "y"]);
  assert.ok(!p.outputs().includes(TYPED), "the text is never echoed");
  assert.equal((await p.refusals("type")) + (await p.refusals("key")), 0);
});

Deno.test("parsePolicy() reads model_may_type_passwords, off by default; toolSettingsFrom() carries it only when on", () => {
  assert.equal(parsePolicy("").model_may_type_passwords, false);
  assert.equal(parsePolicy("model_may_type_passwords: true\n").model_may_type_passwords, true);
  assert.throws(
    () => parsePolicy("allowed_origins: []\nmodel_may_type_passwords: sometimes\n", "p.yaml"),
    /p\.yaml:2: "model_may_type_passwords"/,
  );
  assert.equal(toolSettingsFrom(parsePolicy("")).modelMayTypePasswords, undefined);
  assert.equal(
    toolSettingsFrom(parsePolicy("model_may_type_passwords: true\n")).modelMayTypePasswords,
    true,
  );
});

Deno.test("keyMayType() is true for characters and Control/Alt/Meta chords, false for keys that type nothing", () => {
  for (const key of ["a", "Z", "1", "/", "Shift+a", "Space", "Control+v", "Meta+v", "Alt+1"]) {
    assert.equal(keyMayType(key), true, key);
  }
  for (
    const key of ["Enter", "Tab", "Shift+Tab", "Escape", "Backspace", "Delete", "ArrowDown", "F5"]
  ) {
    assert.equal(keyMayType(key), false, key);
  }
});
