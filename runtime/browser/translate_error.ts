/**
 * What the model hears when the browser layer fails: a stable code, never a CDP message
 * (those can quote page data).
 *
 * @module
 */
import { CdpLayerError } from "../../cdp/mod.ts";
import { BrowserLostError, OmotaiError } from "../mod.ts";

/** Maps a low-level failure to an `OmotaiError`; other errors pass unchanged. */
export function translateBrowserError(err: unknown, browserExited: boolean): unknown {
  if (err instanceof OmotaiError) return err;
  if (err instanceof CdpLayerError) {
    // The call that saw the browser die reports it; the next call starts a fresh one.
    if (browserExited) return new BrowserLostError();
    if (err.code === "CDP_CLOSED") {
      return new OmotaiError(
        "TARGET_CLOSED",
        "the tab or frame closed while acting; take a new snapshot",
      );
    }
    if (err.code === "CDP_TIMEOUT") {
      return new OmotaiError("BROWSER_TIMEOUT", "the browser did not answer in time");
    }
    return new OmotaiError("BROWSER_ERROR", "the browser refused the action");
  }
  return err;
}
