import assert from "node:assert/strict";
import { type CdpSession, CdpTimeoutError, TargetTracker } from "../../cdp/mod.ts";
import { html, type Pages, serveTwoOrigins } from "../../tests/fixtures/two_origins.ts";
import { ANSWER_BOUND_MS } from "../../tests/helpers/harness.ts";
import { testBrowser } from "../../tests/helpers/operator_browser.ts";
import { inFrameWorld, type WorldFrame } from "./frame_world.ts";

/** The page's main frame, as `Page.getFrameTree` has it now. */
async function mainFrame(page: CdpSession): Promise<WorldFrame> {
  const { frameTree } = await page.send("Page.getFrameTree");
  return frameTree.frame;
}

/** Evaluates `expression` in world `contextId`, by value. */
function valueIn(page: CdpSession, contextId: number, expression: string): Promise<unknown> {
  return page.send("Runtime.evaluate", { expression, contextId, returnByValue: true })
    .then((r) => {
      if (r.exceptionDetails) throw new Error(r.exceptionDetails.text);
      return r.result.value;
    });
}

Deno.test("inFrameWorld: one world per document, shared by reads, made anew for a new document or a lost context; a timeout is not asked twice", async (t) => {
  const routes: Pages = {
    "/a": () => html(`<h1>A</h1><script>window.mark = "page";</script>`, "A"),
  };
  await using site = serveTwoOrigins(() => routes);
  await using launched = await testBrowser();
  const tracker = await TargetTracker.start(launched.browser.connection, async (tr) => {
    if (tr.info.type === "page") await tr.session.send("Page.enable");
  });
  const deadline = Date.now() + ANSWER_BOUND_MS;
  while (!tracker.targets().some((tr) => tr.info.type === "page") && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 50));
  }
  const page = tracker.targets().find((tr) => tr.info.type === "page")!.session;
  // Enabled here too: the tracker's own call may still be under way.
  await page.send("Page.enable");
  const open = async () => {
    const loaded = page.waitFor("Page.loadEventFired", undefined, { timeoutMs: ANSWER_BOUND_MS });
    await page.send("Page.navigate", { url: `${site.origin}/a` });
    await loaded;
    return await mainFrame(page);
  };
  // The session as inFrameWorld sees it, counting the worlds it asks for. (Chromium answers a
  // second ask for a world of the same name in one document with the same context: what a
  // cache saves is the round trip.)
  let made = 0;
  const counted = {
    send: ((method: string, params?: unknown, options?: unknown) => {
      if (method === "Page.createIsolatedWorld") made++;
      return (page.send as (m: string, p?: unknown, o?: unknown) => Promise<unknown>)(
        method,
        params,
        options,
      );
    }) as CdpSession["send"],
  } as CdpSession;
  let frame = await open();

  await t.step(
    "reads that start together share the one world being made; the page's globals are not in it",
    async () => {
      const seen: number[] = [];
      const reads = await Promise.all(
        [1, 2, 3].map(() =>
          inFrameWorld(counted, frame, async (id) => {
            seen.push(id);
            return await valueIn(page, id, "typeof window.mark");
          })
        ),
      );
      assert.deepEqual(reads, ["undefined", "undefined", "undefined"]);
      assert.equal(new Set(seen).size, 1, "one world");
      assert.equal(made, 1, "asked for once");
      // The world is the runtime's own: what it leaves there a later read sees.
      await inFrameWorld(counted, frame, (id) => valueIn(page, id, "window.ours = 1"));
      assert.equal(await inFrameWorld(counted, frame, (id) => valueIn(page, id, "window.ours")), 1);
      assert.equal(made, 1, "later reads of the document reuse it");
    },
  );

  await t.step("a new document (a new loader) gets a new world", async () => {
    frame = await open();
    assert.equal(
      await inFrameWorld(counted, frame, (id) => valueIn(page, id, "typeof ours")),
      "undefined",
    );
    assert.equal(made, 2);
  });

  await t.step("a read that fails is run once more in a world asked for anew", async () => {
    let calls = 0;
    const got = await inFrameWorld(counted, frame, (id) => {
      if (++calls === 1) return Promise.reject(new Error("Cannot find context with specified id"));
      return valueIn(page, id, "'read'");
    });
    assert.equal(got, "read");
    assert.equal(calls, 2);
    assert.equal(made, 3);
    // A read that fails twice fails.
    await assert.rejects(
      inFrameWorld(counted, frame, () => Promise.reject(new Error("gone"))),
      /gone/,
    );
    assert.equal(made, 4);
  });

  await t.step(
    "a timeout is thrown at once, and the next read asks for its world anew",
    async () => {
      await inFrameWorld(counted, frame, (id) => Promise.resolve(id));
      const before = made;
      let calls = 0;
      await assert.rejects(
        inFrameWorld(counted, frame, () => {
          calls++;
          return Promise.reject(new CdpTimeoutError("Runtime.evaluate", 1));
        }),
        CdpTimeoutError,
      );
      assert.equal(calls, 1, "a busy renderer is not asked twice");
      assert.equal(made, before);
      await inFrameWorld(counted, frame, (id) => Promise.resolve(id));
      assert.equal(made, before + 1);
    },
  );
});
