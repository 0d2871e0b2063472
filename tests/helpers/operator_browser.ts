/**
 * An operator's browser for console tests: a Chromium of its own (not the runtime's), one
 * page in it, driven over CDP.
 *
 * @module
 */
import { type CdpSession, findBrowser, launchBrowser, ProfileStore } from "../../cdp/mod.ts";

/** The operator's page and what the console tests do with it. */
export interface OperatorBrowser extends AsyncDisposable {
  /** The page's CDP session (Page is enabled), for events and other commands. */
  page: CdpSession;
  /** The value of `expression` in the page, run as if by a user gesture. */
  evaluate(expression: string): Promise<unknown>;
  /** Evaluates `expression` and waits for the page load it causes (a click, a submit). */
  evaluateAndLoad(expression: string): Promise<void>;
  /** Navigates to `url` and waits for the load. */
  navigate(url: string): Promise<void>;
  /** Logs in on the console at `baseUrl` with the admin `token` through its login form. */
  login(baseUrl: string, token: string): Promise<void>;
}

/** Launches the operator's Chromium with a profile from a store opened in `dataDir`. */
export async function operatorBrowser(dataDir: string): Promise<OperatorBrowser> {
  const profiles = await ProfileStore.open(dataDir);
  const browser = await launchBrowser({
    executable: findBrowser(Deno.env.get("OMOTAI_BROWSER")),
    profileDir: await profiles.create(),
  }).catch(async (err) => {
    await profiles[Symbol.asyncDispose]();
    throw err;
  });
  const close = async () => {
    await browser.close();
    await profiles[Symbol.asyncDispose]();
  };
  try {
    const root = browser.connection.root;
    const { targetId } = await root.send("Target.createTarget", { url: "about:blank" });
    const { sessionId } = await root.send("Target.attachToTarget", { targetId, flatten: true });
    const page = browser.connection.session(sessionId)!;
    await page.send("Page.enable");
    const evaluate = async (expression: string) =>
      (await page.send("Runtime.evaluate", { expression, returnByValue: true, userGesture: true }))
        .result.value;
    const loaded = () => page.waitFor("Page.loadEventFired", undefined, { timeoutMs: 10_000 });
    const evaluateAndLoad = async (expression: string) => {
      const load = loaded();
      await evaluate(expression);
      await load;
    };
    const navigate = async (url: string) => {
      const load = loaded();
      await page.send("Page.navigate", { url });
      await load;
    };
    return {
      page,
      evaluate,
      evaluateAndLoad,
      navigate,
      async login(baseUrl, token) {
        await navigate(`${baseUrl}/login`);
        await evaluateAndLoad(
          `document.querySelector("input[name=token]").value = ${JSON.stringify(token)};
           document.querySelector("form").submit();`,
        );
      },
      [Symbol.asyncDispose]: close,
    };
  } catch (err) {
    await close();
    throw err;
  }
}
