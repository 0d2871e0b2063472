/**
 * Chromium for tests that drive one directly: `testBrowser()` launches it as every such test
 * did (the browser `OMOTAI_BROWSER` names or the first found, a fresh profile); the
 * operator's browser of the console tests is one, with a page in it. Kept in this file so
 * `tests/unit_task_test.ts` (which knows a browser test by its import of this file) still
 * finds every test that starts Chromium.
 *
 * @module
 */
import {
  type BrowserProcess,
  type CdpSession,
  findBrowser,
  launchBrowser,
  openTab,
  ProfileStore,
} from "../../cdp/mod.ts";

/** A launched Chromium and its profile; disposing it closes the browser, then the store. */
export interface TestBrowser extends AsyncDisposable {
  browser: BrowserProcess;
  /** The profile directory the browser runs in. */
  profileDir: string;
  /** The store the profile came from. */
  profiles: ProfileStore;
}

/**
 * Launches Chromium (`executable`, else the one the runtime would pick) with a new profile
 * from a store opened in `dataDir`; without one, in a temporary directory (named with
 * `prefix`) that disposing removes.
 */
export async function testBrowser(
  options: { dataDir?: string; prefix?: string; executable?: string } = {},
): Promise<TestBrowser> {
  const { dataDir, prefix = "omotai-browser-" } = options;
  const dir = dataDir ?? await Deno.makeTempDir({ prefix });
  const profiles = await ProfileStore.open(dir);
  const release = async () => {
    await profiles[Symbol.asyncDispose]();
    if (dataDir === undefined) await Deno.remove(dir, { recursive: true });
  };
  const profileDir = await profiles.create();
  const browser = await launchBrowser({
    executable: options.executable ?? findBrowser(Deno.env.get("OMOTAI_BROWSER")),
    profileDir,
  }).catch(async (err) => {
    await release();
    throw err;
  });
  return {
    browser,
    profileDir,
    profiles,
    async [Symbol.asyncDispose]() {
      await browser.close();
      await release();
    },
  };
}

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
  const chromium = await testBrowser({ dataDir });
  const browser = chromium.browser;
  const close = () => chromium[Symbol.asyncDispose]();
  try {
    const { session: page } = await openTab(browser);
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
