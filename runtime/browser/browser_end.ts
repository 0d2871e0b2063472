/**
 * Why the runtime ended a session's browser, when it did: a CDP fault (a message it could not
 * take, a handler of its own that failed: `CdpFaultError`), or the kernel killing a process
 * of the browser's cgroup for memory (`BROWSER_OOM`: the whole browser is then ended). One
 * code per reason, one fixed sentence per code for the model (never the page's data), and
 * the `BROWSER_LOST` the call under way fails with.
 *
 * @module
 */
import type { CdpFaultCode } from "../../cdp/mod.ts";
import { BrowserLostError } from "../mod.ts";
import type { Live } from "./live.ts";

/** Why a browser was ended by the runtime. */
export type BrowserEndCode =
  | CdpFaultCode
  /** The kernel killed a process of the browser's group at its memory limit. */
  | "BROWSER_OOM";

/** The runtime's reason for ending a browser. */
export interface BrowserEnd {
  code: BrowserEndCode;
}

/**
 * Why the runtime ended `live`'s browser, if it did: its connection's fault first (the
 * first end is the one kept), else an OOM kill its group recorded.
 */
export function endOf(live: Live): BrowserEnd | undefined {
  const fault = live.browser.fault;
  if (fault) return { code: fault.code };
  if (live.group && live.group.oomKills() > 0) return { code: "BROWSER_OOM" };
  return undefined;
}

/** What the model hears about an end: a fixed sentence per code, never the message's data. */
export function endText(end: BrowserEnd): string {
  switch (end.code) {
    case "CDP_MESSAGE_TOO_LARGE":
      return "the browser sent a message over the runtime's cap, e.g. a page logging a huge string";
    case "CDP_MESSAGE_MALFORMED":
      return "the browser sent a message that is not valid UTF-8 JSON";
    case "CDP_LISTENER_FAILED":
      return "the runtime failed handling this browser's events";
    case "SESSION_FLOODING":
      return "the page made the browser send data faster than the runtime's byte-rate cap for too long";
    case "BROWSER_OOM":
      return "a page used more memory than the browser's limit (limits.browser_memory_mb) and the kernel killed it";
  }
}

/** `BROWSER_LOST` for a browser the runtime ended: the message names the end's code. */
class BrowserEndedError extends BrowserLostError {
  /** The end's code (`CDP_MESSAGE_TOO_LARGE`, `BROWSER_OOM`...). */
  readonly reason: BrowserEndCode;
  constructor(end: BrowserEnd) {
    super();
    this.reason = end.code;
    this.message = `the runtime ended this session's browser (${end.code}: ${
      endText(end)
    }); this action did not finish. The next call starts a fresh browser (pages and cookies are gone)`;
  }
}

/** `BROWSER_LOST` for a call whose browser went; with the reason when the runtime ended it. */
export function browserLost(end: BrowserEnd | undefined): BrowserLostError {
  return end ? new BrowserEndedError(end) : new BrowserLostError();
}
