/**
 * Opens an HTML report in a real headless Chromium and reports what a reader's browser would
 * see: its title, any error in its page log (a CSP violation is one), every
 * request beyond the file itself (a self-contained report makes none), how many chart bars
 * and case rows it drew, and its size; optionally a full-page PNG for the docs.
 *
 * The browser runs through the project's own CDP layer with a fresh profile in a temporary
 * directory that is removed afterwards, whatever happens.
 *
 * @module
 */
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { findBrowser, launchBrowser, openTab, ProfileStore } from "../../cdp/mod.ts";
import type { BrowserProcess, CdpSession } from "../../cdp/mod.ts";
import { OmotaiError } from "../mod.ts";

/** What opening a report in Chromium showed. */
export interface ReportCheck {
  /** `document.title`. */
  title: string;
  /** The page log's errors: `console.error` calls, uncaught exceptions and browser log errors (CSP violations among them). */
  pageErrors: string[];
  /** Every URL the page requested other than the report file itself. */
  requests: string[];
  /** Chart bars drawn (`.bar`). */
  bars: number;
  /** Case rows of the case table (`tr.case-row`). */
  cases: number;
  /** The page's full content size in CSS pixels. */
  width: number;
  height: number;
}

/** Options of {@link checkReportInBrowser}. */
export interface ReportCheckOptions {
  /** Where to write a full-page PNG of the report; none when absent. */
  screenshot?: string;
}

/** How long the report may take to load: a static file with nothing to fetch. */
const LOAD_TIMEOUT_MS = 15_000;
/** The tallest screenshot taken: a longer report is cut at the bottom. */
const SCREENSHOT_MAX_HEIGHT = 4_000;

/** The text of a `console.*` call's arguments. */
function callText(args: readonly { value?: unknown; description?: string }[]): string {
  return args.map((a) => a.description ?? (typeof a.value === "string" ? a.value : String(a.value)))
    .join(" ");
}

/** What the page reports of itself: read in the page, returned by value. */
const INSPECT = `({
  title: document.title,
  bars: document.querySelectorAll(".bar").length,
  cases: document.querySelectorAll("tr.case-row").length,
})`;

/**
 * Opens `htmlPath` (a `file://` URL) in a new headless Chromium and returns what it saw; with
 * `options.screenshot`, also writes a full-page PNG there (at most 4,000 px high). The
 * browser is closed and its profile removed before this returns or throws. Throws
 * `EVAL_REPORT_FAILED` when the file is missing, Chromium cannot start, or the page does not
 * load.
 */
export async function checkReportInBrowser(
  htmlPath: string,
  options: ReportCheckOptions = {},
): Promise<ReportCheck> {
  const path = resolve(htmlPath);
  try {
    if (!(await Deno.stat(path)).isFile) throw new Error("not a file");
  } catch (err) {
    throw failed(`cannot read the report ${path}`, err);
  }
  const url = pathToFileURL(path).href;
  const dir = await Deno.makeTempDir({ prefix: "omotai-report-check-" });
  let profiles: ProfileStore | undefined;
  let browser: BrowserProcess | undefined;
  try {
    profiles = await ProfileStore.open(dir);
    const profileDir = await profiles.create();
    browser = await launchBrowser({
      executable: findBrowser(Deno.env.get("OMOTAI_BROWSER")),
      profileDir,
    });
    const { session } = await openTab(browser);
    return await inspect(session, url, options.screenshot);
  } catch (err) {
    if (err instanceof OmotaiError) throw err;
    throw failed(`cannot check the report ${path} in Chromium`, err);
  } finally {
    await browser?.close().catch(() => {});
    await profiles?.[Symbol.asyncDispose]().catch(() => {});
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
}

/** Loads `url` in `page` while listening for errors and requests, then measures it. */
async function inspect(
  page: CdpSession,
  url: string,
  screenshot: string | undefined,
): Promise<ReportCheck> {
  const pageErrors: string[] = [];
  const requests: string[] = [];
  // Subscribed before the domains are enabled: nothing the page does on load is missed.
  page.on("Runtime.consoleAPICalled", (e) => {
    if (e.type === "error" || e.type === "assert") pageErrors.push(callText(e.args));
  });
  page.on("Runtime.exceptionThrown", (e) => {
    const d = e.exceptionDetails;
    pageErrors.push(d.exception?.description ?? d.text);
  });
  page.on("Log.entryAdded", ({ entry }) => {
    if (entry.level === "error") pageErrors.push(entry.text);
  });
  page.on("Network.requestWillBeSent", ({ request }) => {
    if (request.url !== url) requests.push(request.url);
  });
  await page.send("Page.enable");
  await page.send("Runtime.enable");
  await page.send("Log.enable");
  await page.send("Network.enable");

  const loaded = page.waitFor("Page.loadEventFired", undefined, { timeoutMs: LOAD_TIMEOUT_MS });
  // A failed navigation would leave the wait pending: it is caught here and reported below.
  loaded.catch(() => {});
  const { errorText } = await page.send("Page.navigate", { url });
  if (errorText) {
    throw new OmotaiError("EVAL_REPORT_FAILED", `the report did not load: ${errorText}`);
  }
  await loaded;

  const { result, exceptionDetails } = await page.send("Runtime.evaluate", {
    expression: INSPECT,
    returnByValue: true,
  });
  if (exceptionDetails) {
    throw new OmotaiError(
      "EVAL_REPORT_FAILED",
      `cannot read the report page: ${exceptionDetails.text}`,
    );
  }
  const seen = result.value as { title: string; bars: number; cases: number };
  const { cssContentSize } = await page.send("Page.getLayoutMetrics");
  const width = Math.ceil(cssContentSize.width);
  const height = Math.ceil(cssContentSize.height);
  if (screenshot !== undefined) {
    await page.send("Emulation.setDeviceMetricsOverride", {
      width,
      height: Math.min(height, SCREENSHOT_MAX_HEIGHT),
      deviceScaleFactor: 1,
      mobile: false,
    });
    const { data } = await page.send("Page.captureScreenshot", { format: "png" });
    await Deno.writeFile(screenshot, Uint8Array.from(atob(data), (c) => c.charCodeAt(0)));
  }
  return {
    title: seen.title,
    pageErrors,
    requests,
    bars: seen.bars,
    cases: seen.cases,
    width,
    height,
  };
}

/** An `EVAL_REPORT_FAILED` error saying what failed and why. */
function failed(what: string, err: unknown): OmotaiError {
  return new OmotaiError(
    "EVAL_REPORT_FAILED",
    `${what}: ${err instanceof Error ? err.message : String(err)}`,
    { cause: err },
  );
}
