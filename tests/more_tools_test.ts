import assert from "node:assert/strict";
import { ProfileStore } from "../cdp/mod.ts";
import { BrowserSession } from "../runtime/browser/browser_session.ts";
import { allowAllGate, type Gate } from "../runtime/gate/gate.ts";
import { parsePolicy } from "../runtime/policy/policy_file.ts";
import { navigateTool } from "../runtime/tools/navigate.ts";
import { closeTool, resizeTool, takeScreenshotTool } from "../runtime/tools/page.ts";
import { hoverTool } from "../runtime/tools/pointer.ts";
import { snapshotTool } from "../runtime/tools/snapshot.ts";
import { tabsTool } from "../runtime/tools/tabs.ts";
import { toolSettingsFrom } from "../runtime/tools/settings.ts";
import type { AnyTool, ToolResult, ToolSettings } from "../runtime/tools/mod.ts";
import { runTool } from "../runtime/tools/pipeline.ts";
import { DEFAULT_TOOL_SETTINGS } from "../runtime/tools/tool.ts";
import { FILLED, serveToolsSite, type ToolsSite } from "./fixtures/tools_site.ts";
import {
  type CallOutcome,
  OVERVIEW_SETTINGS,
  refOf,
  startHarness,
  type TestClient,
} from "./helpers/harness.ts";

/** Only the first origin, read-only. */
const strict = (t: ToolsSite) => `allowed_origins: [${t.origin}]\nread_only: true\n`;
/** Both origins, and forms may only post back to the origin of their own frame. */
const firstParty = (t: ToolsSite) =>
  `allowed_origins: [${t.origin}, ${t.otherOrigin}]\nread_only: false\n` +
  `modules:\n  - path: bundled:baseline\n  - path: bundled:no-third-party-forms\n`;

/** A runtime whose policy allows the tools site as `policy` says, and one client. */
async function world(policy: (t: ToolsSite) => string) {
  const site = serveToolsSite();
  const h = await startHarness(() => policy(site));
  const c = await h.connect();
  return {
    site,
    c,
    async [Symbol.asyncDispose]() {
      await h[Symbol.asyncDispose]();
      await site[Symbol.asyncDispose]();
    },
  };
}

/**
 * Starts a case on a world its test shares: no posts recorded yet. Returns the case's own
 * outputs so far, so a value another case let out fails that case and no other.
 */
function fresh(w: { site: ToolsSite; c: TestClient }): () => string {
  w.site.posts.clear();
  const from = w.c.outputs.length;
  return () => w.c.outputs.slice(from).join("\n");
}

const ok = (r: CallOutcome) => {
  assert.equal(r.isError, false, r.text);
  return r;
};

/** The part of a snapshot inside the out-of-process frame of `origin`. */
function frameText(snapshot: string, origin: string): string {
  const lines = snapshot.split("\n");
  return lines.slice(lines.findIndex((l) => l.includes(`[frame ${origin}`))).join("\n");
}

/**
 * The ref of the first line matching `pattern`, in a full page or in a diff (an action's
 * result after the first view of a document: lines marked `+` added, `~` changed).
 */
function refIn(text: string, pattern: RegExp): string {
  return refOf(text.split("\n").map((l) => l.replace(/^[+~] /, "")).join("\n"), pattern);
}

async function go(c: TestClient, url: string): Promise<string> {
  return ok(await c.call("browser_navigate", { url })).text;
}

Deno.test("browser_hover, browser_drag, browser_fill_form, browser_take_screenshot, browser_close and browser_resize over one session of a runtime allowing both origins, writes, and forms that post to their own frame's origin", async (t) => {
  // One runtime and one session for independent cases: every step navigates to its own page
  // first, clears the site's recorded posts and reads only its own outputs; the resize step
  // comes last, since the viewport it sets outlives a navigation.
  await using w = await world(firstParty);
  await t.step(
    "browser_hover reveals a hover menu, also inside an out-of-process frame",
    async () => {
      fresh(w);
      const page = await go(w.c, `${w.site.origin}/hover`);
      assert.doesNotMatch(page, /Hidden product link/);
      const r = ok(await w.c.call("browser_hover", { ref: refOf(page, /button "Products"/) }));
      assert.match(r.text, /^hovered over e\d+$/m);
      assert.match(r.text, /"Hidden product link" -> \/next/);
      // The menu stays open under the mouse: its link can be clicked.
      const next = await w.c.call("browser_click", {
        ref: refIn(r.text, /"Hidden product link" ->/),
      });
      assert.match(ok(next).text, /# Next page/);
      const frames = await go(w.c, `${w.site.origin}/frames`);
      const button = refOf(frameText(frames, w.site.otherOrigin), /button "Frame button"/);
      const inFrame = ok(await w.c.call("browser_hover", { ref: button, element: "Frame button" }));
      assert.match(frameText(inFrame.text, w.site.otherOrigin), /frame hovered/);
    },
  );
  await t.step(
    "browser_drag drops with HTML5 drag and drop, and the page keeps taking input",
    async () => {
      fresh(w);
      const page = await go(w.c, `${w.site.origin}/dnd-html5`);
      const zone = refOf(page, /button "Drop zone"/);
      const r = ok(
        await w.c.call("browser_drag", {
          startElement: "Card A",
          startRef: refOf(page, /button "Card A"/),
          endElement: "Drop zone",
          endRef: zone,
        }),
      );
      assert.match(r.text, /^dragged e\d+ onto e\d+ \(HTML5 drag and drop\)$/m);
      assert.match(r.text, /dropped card-a on zone/);
      assert.match(r.text, /title: dragend card-a/);
      const again = ok(
        await w.c.call("browser_drag", { startRef: refOf(page, /button "Card B"/), endRef: zone }),
      );
      assert.match(again.text, /dropped card-b on zone/);
      const hover = ok(await w.c.call("browser_hover", { ref: zone }));
      assert.match(hover.text, /hovered over/);
    },
  );
  await t.step(
    "browser_drag moves an element that follows mousedown, mousemove and mouseup",
    async () => {
      fresh(w);
      const page = await go(w.c, `${w.site.origin}/dnd-mouse`);
      const r = ok(
        await w.c.call("browser_drag", {
          startRef: refOf(page, /button "Knob"/),
          endRef: refOf(page, /button "Target area"/),
        }),
      );
      assert.match(r.text, /\(mouse drag\)/);
      assert.match(r.text, /knob in target after several moves/);
      // A covered end is found before any input: the knob is not even pressed.
      const covered = await w.c.call("browser_drag", {
        startRef: refOf(page, /button "Knob"/),
        endRef: refOf(page, /button "Covered target"/),
      });
      assert.match(covered.text, /^error: CLICK_INTERCEPTED \(another element covers e\d+/);
      const after = ok(await w.c.call("browser_snapshot")).text;
      assert.match(after, /knob in target after several moves/, "no mouseup since the last drag");
    },
  );
  await t.step(
    "browser_drag is judged at both ends: a third-party frame form denies it",
    async () => {
      fresh(w);
      const frames = await go(w.c, `${w.site.origin}/frames`);
      const inFrame = frameText(frames, w.site.otherOrigin);
      const drag = await w.c.call("browser_drag", {
        startRef: refOf(inFrame, /button "Frame button"/),
        endRef: refOf(inFrame, /textbox "Frame field"/),
      });
      assert.match(drag.text, /^denied: FORM_THIRD_PARTY/);
      const hover = await w.c.call("browser_hover", {
        ref: refOf(inFrame, /textbox "Frame field"/),
      });
      assert.match(hover.text, /^denied: FORM_THIRD_PARTY/);
      ok(await w.c.call("browser_hover", { ref: refOf(inFrame, /button "Frame button"/) }));
    },
  );
  await t.step(
    "browser_fill_form fills text, checkbox, radio, select and slider fields and never echoes a value",
    async () => {
      const outputs = fresh(w);
      const page = await go(w.c, `${w.site.origin}/form`);
      const r = ok(await w.c.call("browser_fill_form", { fields: signUp(page) }));
      assert.equal(r.text, "filled 8 field(s): 3 typed, 3 clicked, 1 selected, 1 set");
      // Already as asked: nothing to click.
      const same = ok(
        await w.c.call("browser_fill_form", {
          fields: [{
            name: "Pro",
            type: "radio",
            ref: refOf(page, /radio "Pro plan"/),
            value: "true",
          }],
        }),
      );
      assert.equal(same.text, "filled 1 field(s): 1 unchanged");
      const sent = ok(
        await w.c.call("browser_click", { ref: refOf(page, /button "Create account"/) }),
      );
      assert.match(sent.text, /# Thanks for signing up/);
      const body = new URLSearchParams(w.site.posts.get("/signup")?.[0] ?? "");
      assert.deepEqual(Object.fromEntries(body), {
        name: FILLED.name,
        email: FILLED.email,
        note: FILLED.note,
        news: "yes",
        plan: "pro",
        country: "jp",
        volume: "70",
        pw: "",
      });
      const all = outputs();
      for (const value of [FILLED.name, FILLED.email, FILLED.note]) {
        assert.ok(!all.includes(value), `a filled value reached a tool result: ${value}`);
      }
    },
  );
  await t.step(
    "browser_fill_form refuses a password field before filling anything (PASSWORD_FIELD)",
    async () => {
      const outputs = fresh(w);
      const page = await go(w.c, `${w.site.origin}/form`);
      const r = await w.c.call("browser_fill_form", {
        fields: [
          {
            name: "Full name",
            type: "textbox",
            ref: refOf(page, /textbox "Full name"/),
            value: FILLED.name,
          },
          {
            name: "Secret",
            type: "textbox",
            ref: refOf(page, /password "Secret"/),
            value: FILLED.password,
          },
        ],
      });
      assert.equal(r.isError, true);
      assert.match(
        r.text,
        /^error: PASSWORD_FIELD \(e\d+ is a password field: .*nothing was filled\)$/,
      );
      ok(await w.c.call("browser_click", { ref: refOf(page, /button "Create account"/) }));
      const body = new URLSearchParams(w.site.posts.get("/signup")?.[0] ?? "");
      assert.equal(body.get("name"), "", "the field before the password was not filled either");
      assert.equal(body.get("pw"), "");
      const all = outputs();
      assert.ok(!all.includes(FILLED.password) && !all.includes(FILLED.name));
    },
  );
  await t.step("browser_fill_form refuses bad values without echoing them", async () => {
    const outputs = fresh(w);
    const page = await go(w.c, `${w.site.origin}/form`);
    const box = await w.c.call("browser_fill_form", {
      fields: [{
        name: "n",
        type: "checkbox",
        ref: refOf(page, /checkbox "Newsletter"/),
        value: "yes",
      }],
    });
    assert.match(
      box.text,
      /^error: INVALID_ARGUMENTS \(the value of checkbox e\d+ must be "true" or "false"\)/,
    );
    const option = await w.c.call("browser_fill_form", {
      fields: [{
        name: "c",
        type: "combobox",
        ref: refOf(page, /combobox "Country"/),
        value: "planted-Atlantis",
      }],
    });
    assert.match(option.text, /error: NO_SUCH_OPTION \(e\d+ has no such enabled option\)/);
    const radio = await w.c.call("browser_fill_form", {
      fields: [{ name: "f", type: "radio", ref: refOf(page, /radio "Free plan"/), value: "false" }],
    });
    assert.match(radio.text, /error: NOT_CHECKABLE/);
    const notBox = await w.c.call("browser_fill_form", {
      fields: [{
        name: "n",
        type: "checkbox",
        ref: refOf(page, /textbox "Full name"/),
        value: "true",
      }],
    });
    assert.match(notBox.text, /error: NOT_CHECKABLE/);
    assert.match((await w.c.call("browser_fill_form", { fields: [] })).text, /INVALID_ARGUMENTS/);
    assert.ok(!outputs().includes("planted-Atlantis"));
  });
  await t.step(
    "browser_fill_form is judged per field: one field of a third-party form denies the call",
    async () => {
      fresh(w);
      const frames = await go(w.c, `${w.site.origin}/frames`);
      const field = refOf(frameText(frames, w.site.otherOrigin), /textbox "Frame field"/);
      const third = await w.c.call("browser_fill_form", {
        fields: [{ name: "q", type: "textbox", ref: field, value: "x" }],
      });
      assert.match(third.text, /^denied: FORM_THIRD_PARTY/);
    },
  );
  await t.step(
    "browser_take_screenshot is refused while the operator has not enabled screenshots",
    async () => {
      fresh(w);
      await go(w.c, `${w.site.origin}/shot`);
      const r = await w.c.call("browser_take_screenshot", { type: "png", fullPage: true });
      assert.equal(r.isError, true);
      assert.match(r.text, /^error: SCREENSHOTS_DISABLED \(screenshots are off/);
      const { tools } = await w.c.client.listTools();
      const hint = (n: string) => tools.find((t) => t.name === n)?.annotations;
      assert.equal(hint("browser_take_screenshot")?.readOnlyHint, true);
      for (const n of ["browser_hover", "browser_drag", "browser_fill_form", "browser_close"]) {
        assert.equal(hint(n)?.readOnlyHint, false, n);
      }
    },
  );
  await t.step("browser_close closes the current tab; the next call gets a fresh one", async () => {
    fresh(w);
    await go(w.c, `${w.site.origin}/hover`);
    // The only tab, as in a session of its own: a tab an earlier case left would stand in
    // for the fresh one below.
    assert.match(ok(await w.c.call("browser_tabs", { action: "list" })).text, /^1 tab\(s\)/m);
    const r = ok(await w.c.call("browser_close"));
    assert.equal(r.text, "closed the current tab");
    const list = ok(await w.c.call("browser_tabs", { action: "list" }));
    assert.match(list.text, /1 tab\(s\)/);
    assert.doesNotMatch(list.text, /Hover/);
    assert.match((await w.c.call("browser_close", { index: 0 })).text, /^error: INVALID_ARGUMENTS/);
    await go(w.c, `${w.site.origin}/next`);
  });
  await t.step("browser_resize changes the viewport the page sees, within bounds", async () => {
    fresh(w);
    await go(w.c, `${w.site.origin}/shot`);
    const r = ok(await w.c.call("browser_resize", { width: 640, height: 480 }));
    assert.match(r.text, /^resized the viewport to 640×480$/m);
    assert.match(r.text, /viewport 640x480/);
    for (
      const args of [{ width: 100, height: 480 }, { width: 640, height: 5_000 }, { width: 640 }]
    ) {
      assert.match((await w.c.call("browser_resize", args)).text, /^error: INVALID_ARGUMENTS/);
    }
    assert.match(ok(await w.c.call("browser_snapshot")).text, /viewport 640x480/);
  });
});

Deno.test("browser_hover, browser_drag and browser_fill_form over one session of a runtime allowing one origin, read-only", async (t) => {
  await using w = await world(strict);
  await t.step(
    "browser_hover is judged as a click that goes nowhere: foreign links and forms denied, a POST button allowed",
    async () => {
      fresh(w);
      const page = await go(w.c, `${w.site.origin}/hover`);
      const away = await w.c.call("browser_hover", { ref: refOf(page, /"Away link" ->/) });
      assert.match(
        away.text,
        /^denied: LINK_ORIGIN_NOT_ALLOWED \(link to http:\/\/127\.0\.0\.3:9\)/,
      );
      const field = await w.c.call("browser_hover", { ref: refOf(page, /textbox "Foreign"/) });
      assert.match(
        field.text,
        /^denied: FORM_DESTINATION_NOT_ALLOWED \(GET form to http:\/\/127\.0\.0\.3:9/,
      );
      // Hovering cannot submit, so read_only does not stop it; clicking the same button is refused.
      const post = refOf(page, /button "Post it"/);
      const hovered = ok(await w.c.call("browser_hover", { ref: post }));
      assert.match(hovered.text, /hovered post button/);
      const clicked = await w.c.call("browser_click", { ref: post });
      assert.match(clicked.text, /^denied: READ_ONLY_SUBMIT/);
      assert.equal(w.site.posts.get("/post"), undefined);
    },
  );
  await t.step("browser_drag is judged at both ends: a foreign form denies it", async () => {
    fresh(w);
    const page = await go(w.c, `${w.site.origin}/dnd-mouse`);
    const knob = refOf(page, /button "Knob"/);
    const r = await w.c.call("browser_drag", {
      startRef: knob,
      endRef: refOf(page, /textbox "Foreign drop"/),
    });
    assert.match(
      r.text,
      /^denied: FORM_DESTINATION_NOT_ALLOWED \(GET form to http:\/\/127\.0\.0\.3:9/,
    );
    const back = await w.c.call("browser_drag", {
      startRef: refOf(page, /textbox "Foreign drop"/),
      endRef: knob,
    });
    assert.match(back.text, /^denied: FORM_DESTINATION_NOT_ALLOWED/);
    assert.match(ok(await w.c.call("browser_snapshot")).text, /knob idle/, "nothing moved");
  });
  await t.step(
    "browser_fill_form is judged per field: one field of a foreign form denies the call",
    async () => {
      const outputs = fresh(w);
      const form = await go(w.c, `${w.site.origin}/form`);
      const local = {
        name: "n",
        type: "textbox",
        ref: refOf(form, /textbox "Full name"/),
        value: "x",
      };
      ok(await w.c.call("browser_fill_form", { fields: [local] }));
      const foreign = await go(w.c, `${w.site.origin}/foreign-form`);
      const r = await w.c.call("browser_fill_form", {
        fields: [
          {
            name: "box",
            type: "checkbox",
            ref: refOf(foreign, /checkbox "Foreign box"/),
            value: "true",
          },
          {
            name: "n",
            type: "textbox",
            ref: refOf(foreign, /textbox "Foreign name"/),
            value: FILLED.name,
          },
        ],
      });
      assert.match(
        r.text,
        /^denied: FORM_DESTINATION_NOT_ALLOWED \(GET form to http:\/\/127\.0\.0\.3:9/,
      );
      const after = ok(await w.c.call("browser_snapshot")).text;
      assert.doesNotMatch(after, /\[checked\]/, "the first field was not filled either");
      assert.ok(!outputs().includes(FILLED.name));
    },
  );
});

/** The sign-up form's fields, filled with planted values. */
function signUp(page: string) {
  return [
    {
      name: "Full name",
      type: "textbox",
      ref: refOf(page, /textbox "Full name"/),
      value: FILLED.name,
    },
    { name: "Email", type: "textbox", ref: refOf(page, /textbox "Email"/), value: FILLED.email },
    { name: "Note", type: "textbox", ref: refOf(page, /textbox "Note"/), value: FILLED.note },
    {
      name: "Newsletter",
      type: "checkbox",
      ref: refOf(page, /checkbox "Newsletter"/),
      value: "true",
    },
    { name: "Terms", type: "checkbox", ref: refOf(page, /checkbox "Terms"/), value: "false" },
    { name: "Pro plan", type: "radio", ref: refOf(page, /radio "Pro plan"/), value: "true" },
    { name: "Country", type: "combobox", ref: refOf(page, /combobox "Country"/), value: "Japan" },
    { name: "Volume", type: "slider", ref: refOf(page, /slider "Volume"/), value: "70" },
  ];
}

/** A launched session driven through `runTool` directly, with settings of the test's choice. */
async function direct() {
  const dir = await Deno.makeTempDir({ prefix: "omotai-more-tools-" });
  const profiles = await ProfileStore.open(dir);
  const session = new BrowserSession({
    profiles,
    executable: Deno.env.get("OMOTAI_BROWSER") ?? "/usr/bin/chromium",
    audit: { append() {} },
  });
  const site = serveToolsSite();
  const call = (
    tool: AnyTool,
    args: Record<string, unknown> = {},
    settings?: ToolSettings,
    gate: Gate = allowAllGate,
  ): Promise<ToolResult> =>
    runTool(tool, args, { session, gate, settings: settings ?? OVERVIEW_SETTINGS });
  return {
    session,
    site,
    call,
    async [Symbol.asyncDispose]() {
      await session[Symbol.asyncDispose]();
      await profiles[Symbol.asyncDispose]();
      await site[Symbol.asyncDispose]();
      await Deno.remove(dir, { recursive: true }).catch(() => {});
    },
  };
}

const text = (r: ToolResult) => r.content[0].text;

async function viewportOf(session: BrowserSession): Promise<[number, number]> {
  const { cssVisualViewport: v } = await (await session.page()).send("Page.getLayoutMetrics");
  return [v.clientWidth, v.clientHeight];
}

function jpegOf(r: ToolResult): { bytes: Uint8Array; width: number; height: number } {
  const block = r.content[1];
  assert.ok(block && block.type === "image", text(r));
  assert.equal(block.mimeType, "image/jpeg");
  const bytes = Uint8Array.from(atob(block.data), (ch) => ch.charCodeAt(0));
  assert.deepEqual([...bytes.slice(0, 3)], [0xff, 0xd8, 0xff], "a JPEG");
  // The frame header (SOF0/SOF2) carries the size.
  for (let i = 2; i < bytes.length - 9; i++) {
    if (bytes[i] === 0xff && (bytes[i + 1] === 0xc0 || bytes[i + 1] === 0xc2)) {
      return {
        bytes,
        height: (bytes[i + 5] << 8) | bytes[i + 6],
        width: (bytes[i + 7] << 8) | bytes[i + 8],
      };
    }
  }
  throw new Error("no JPEG frame header");
}

Deno.test("browser_take_screenshot, browser_close, browser_resize and browser_hover driven through runTool over one launched session", async (t) => {
  // Independent cases on one browser: each navigates to its own page first and measures the
  // viewport it asserts on. The noisy page is shot before a step resizes the viewport, and the
  // tainted-session step comes last, since a taint is never lifted.
  await using d = await direct();
  await t.step("browser_take_screenshot shrinks a noisy page under the size cap", async () => {
    const on: ToolSettings = { ...DEFAULT_TOOL_SETTINGS, screenshots: true };
    await d.call(navigateTool, { url: `${d.site.origin}/noise` });
    const [width] = await viewportOf(d.session);
    const shot = await d.call(takeScreenshotTool, {}, on);
    const { bytes, width: shown } = jpegOf(shot);
    assert.ok(bytes.length <= 300_000, `${bytes.length} bytes`);
    // Noise does not fit at full size: the second attempt is smaller and coarser.
    assert.equal(shown, Math.round(width * 0.6));
  });
  await t.step(
    "browser_close, browser_resize and browser_hover run nothing when the gate denies them",
    async () => {
      const deny: Gate = { check: () => Promise.resolve({ decision: "deny", reason: "NOPE" }) };
      await d.call(navigateTool, { url: `${d.site.origin}/hover` });
      const before = await viewportOf(d.session);
      const snap = text(await d.call(snapshotTool));
      for (
        const [tool, args] of [
          [closeTool, {}],
          [resizeTool, { width: 300, height: 300 }],
          [hoverTool, { ref: refOf(snap, /button "Products"/) }],
        ] as [AnyTool, Record<string, unknown>][]
      ) {
        assert.match(text(await d.call(tool, args, undefined, deny)), /^denied: NOPE$/m, tool.name);
      }
      const after = text(await d.call(snapshotTool));
      assert.doesNotMatch(after, /Hidden product link/, "not hovered");
      assert.match(text(await d.call(tabsTool, { action: "list" })), /0: \[current\] "Hover"/);
      assert.deepEqual(await viewportOf(d.session), before, "not resized");
    },
  );
  await t.step(
    "browser_take_screenshot returns a capped JPEG of the viewport or an element when enabled",
    async () => {
      const on: ToolSettings = toolSettingsFrom(parsePolicy("screenshots: true\n"));
      await d.call(navigateTool, { url: `${d.site.origin}/shot` });
      const [width, height] = await viewportOf(d.session);
      const shot = await d.call(takeScreenshotTool, {}, on);
      assert.equal(shot.isError, undefined, text(shot));
      assert.ok(
        text(shot).startsWith(
          `screenshot of the viewport: ${width}×${height} JPEG, ${
            Math.ceil(jpegOf(shot).bytes.length / 1000)
          } KB. It shows page content`,
        ),
        text(shot),
      );
      const viewport = jpegOf(shot);
      assert.deepEqual([viewport.width, viewport.height], [width, height]);
      assert.ok(viewport.bytes.length <= 300_000);

      const filename = `omotai-shot-${crypto.randomUUID()}.png`;
      const odd = await d.call(takeScreenshotTool, { type: "png", fullPage: true, filename }, on);
      assert.match(text(odd), /fullPage is not supported: only the viewport was captured/);
      assert.match(text(odd), /the image is JPEG: PNG is not offered/);
      assert.match(text(odd), /filename ignored: the runtime writes no files for the model/);
      await assert.rejects(() => Deno.stat(filename), Deno.errors.NotFound);

      const snap = text(await d.call(snapshotTool));
      const band = await d.call(takeScreenshotTool, { ref: refOf(snap, /button "Band"/) }, on);
      assert.match(text(band), /^screenshot of element e\d+: 300×120 JPEG/);
      assert.deepEqual([jpegOf(band).width, jpegOf(band).height], [300, 120]);

      // Wider than the cap: scaled down to 1280.
      await d.call(resizeTool, { width: 1_600, height: 1_000 });
      assert.deepEqual([jpegOf(await d.call(takeScreenshotTool, {}, on)).width], [1_280]);
    },
  );
  await t.step(
    "browser_take_screenshot is refused without the setting and in a tainted session",
    async () => {
      await d.call(navigateTool, { url: `${d.site.origin}/shot` });
      assert.match(text(await d.call(takeScreenshotTool)), /^error: SCREENSHOTS_DISABLED/);
      d.session.state.taint("login");
      const r = await d.call(takeScreenshotTool, {}, {
        ...DEFAULT_TOOL_SETTINGS,
        screenshots: true,
      });
      // The pipeline refuses it before the tool runs (the tool's own check stays behind it).
      assert.match(text(r), /^denied: SESSION_TAINTED \(a credential was used in this session/);
      assert.equal(r.content.length, 1, "no image");
    },
  );
});

Deno.test("toolSettingsFrom() carries screenshots and upload_dir from the policy file", () => {
  assert.deepEqual(toolSettingsFrom(parsePolicy("")), {
    screenshots: false,
    askTimeoutMs: 120_000,
  });
  assert.deepEqual(
    toolSettingsFrom(parsePolicy("screenshots: true\nupload_dir: /srv/up\n")),
    { screenshots: true, uploadDir: "/srv/up", askTimeoutMs: 120_000 },
  );
});
