/**
 * A login the runtime performs: on each page of the flow (one page, or username, password
 * and code pages one after another) it reads the credential fields over CDP, checks the
 * document's origin against the origins the credentials are bound to, types each value
 * through CDP input events (never page script), submits with Enter, and waits for the next
 * page. A push challenge goes to the operator. The outcome is a status code and counts:
 * nothing of a value, a code or the page's text.
 *
 * @module
 */
import { errorCode } from "../mod.ts";
import type { CdpSession } from "../../cdp/mod.ts";
import { keyEvents, runAndSettle } from "../browser/mod.ts";
import { normalizeOrigin } from "../net/mod.ts";
import { redactCut } from "../redact/mod.ts";
import { type CredentialField, readCredentialFields } from "./credential_fields.ts";
import { type FormSubmission, readFormSubmission } from "./form_submission.ts";
import { totpCode, type TotpSeed } from "./totp.ts";

/** The values a login may type; each used only in its own kind of field. */
export interface LoginSecrets {
  username?: string;
  password?: string;
  totp?: TotpSeed;
}

/** Where a push challenge's vendor and match number are on the page (the operator's). */
export interface PushSelectors {
  vendor: string;
  number: string;
}

/** What the operator is asked when a page shows a push challenge. */
export interface PushChannel {
  ask(challenge: { vendor: string; number: string; origin: string }): Promise<
    "approved" | "denied" | "timeout"
  >;
}

/**
 * The one request a runtime step may write (a login's submit: the filled form's own
 * submission), or null when it cannot be known exactly (no form, a file input, a custom form
 * control): then none.
 */
export type RuntimeWrite = FormSubmission | null;

/** The runtime's own write hold (a login's, a capture step's), as a flow drives it. */
export interface RuntimeWriteHold {
  /** The one submission to admit (null: none). */
  expect(write: RuntimeWrite): void;
  /** Resolves once a top-level navigation was judged (true), or after `ms` (false). */
  settled(ms: number): Promise<boolean>;
  /** Closes the hold; the first refusal's code, if any. */
  close(): string | undefined;
  /** Whether the expected submission went out. */
  readonly admitted: boolean;
}

/** What the login may do, from the policy or the grants, never from the model. */
export interface LoginPlan {
  /** Origins the values may be typed on (exact). */
  origins: readonly string[];
  usernameSelector?: string;
  push?: PushSelectors;
  /**
   * Opens the login's write hold while the runtime submits: exactly the filled form's own
   * submission may leave (under `read_only` too, to an origin the policy names), every other
   * write of the session is refused (`LOGIN_WRITE_MISMATCH`). Opened before the values are
   * typed; told what to admit once the form is filled.
   */
  openWrite?: () => RuntimeWriteHold;
}

/** How a login ended. */
export type LoginStatus =
  | "LOGIN_SUBMITTED"
  | "LOGIN_REJECTED"
  | "LOGIN_WRITE_REFUSED"
  | "NO_CREDENTIAL_FIELDS"
  | "FILL_TARGET_REJECTED"
  | "OTP_UNAVAILABLE"
  | "PUSH_DENIED"
  | "PUSH_TIMEOUT"
  | "PUSH_UNAVAILABLE"
  | "LOGIN_FAILED";

/** The outcome the agent and the audit see. */
export interface LoginOutcome {
  ok: boolean;
  status: LoginStatus;
  /** Pages on which values were typed. */
  steps: number;
  /** Fields filled, by kind. */
  filled: number;
  message: string;
}

/** Pages a login may take before it counts as stuck. */
export const MAX_LOGIN_STEPS = 5;
/** How long a submission may take to reach the egress proxy after Enter. */
const SUBMIT_WAIT_MS = 3_000;
/** How long a push challenge may wait for the page to move on after the operator answered. */
const PUSH_SETTLE_MS = 15_000;

/** Performs a login on the tab `page` shows now. Never throws: failures are a status. */
export async function performLogin(
  page: CdpSession,
  plan: LoginPlan,
  secrets: LoginSecrets,
  push?: PushChannel,
): Promise<LoginOutcome> {
  let steps = 0;
  let filled = 0;
  let last = "";
  const out = (ok: boolean, status: LoginStatus, message: string): LoginOutcome => ({
    ok,
    status,
    steps,
    filled,
    message,
  });
  try {
    for (let round = 0; round < MAX_LOGIN_STEPS; round++) {
      const here = await readCredentialFields(page, plan.usernameSelector);
      if (!plan.origins.includes(here.origin)) {
        if (steps > 0 && (here.origin === "null" || !/^https?:/.test(here.url))) {
          // An error page (a refused or failed submission) is not a site that moved on.
          return out(false, "LOGIN_FAILED", "the page after the submission did not load");
        }
        if (steps > 0) {
          return out(true, "LOGIN_SUBMITTED", `submitted; the site moved on to ${here.origin}`);
        }
        return out(
          false,
          "FILL_TARGET_REJECTED",
          `this page's origin ${here.origin} is not one the credentials are bound to`,
        );
      }
      if (here.fields.length === 0) {
        const challenge = plan.push ? await readPush(page, plan.push) : undefined;
        if (challenge && push) {
          const answer = await push.ask({ ...challenge, origin: here.origin });
          if (answer === "denied") return out(false, "PUSH_DENIED", "the operator denied the push");
          if (answer === "timeout") {
            return out(false, "PUSH_TIMEOUT", "the operator did not answer the push in time");
          }
          await waitForUrlChange(page, here.url, PUSH_SETTLE_MS);
          continue;
        }
        if (challenge) {
          return out(
            false,
            "PUSH_UNAVAILABLE",
            "the page shows a push challenge and no operator console is reachable to answer it",
          );
        }
        if (steps === 0) {
          return out(false, "NO_CREDENTIAL_FIELDS", "this page has no credential fields");
        }
        // Honest about what the runtime knows: it submitted, and no field is left. Whether
        // the site accepted it (or now wants a passkey or a hardware key, which the runtime
        // does not do) is the page's to say.
        return out(
          true,
          "LOGIN_SUBMITTED",
          `submitted on ${steps} page(s) and no credential field remains; passkeys, hardware keys and SMS codes are not done by the runtime`,
        );
      }
      const plan_: { field: CredentialField; value: () => Promise<string> }[] = [];
      for (const f of here.fields) {
        if (f.kind === "username" && secrets.username !== undefined) {
          const v = secrets.username;
          plan_.push({ field: f, value: () => Promise.resolve(v) });
        } else if (f.kind === "password" && secrets.password !== undefined) {
          const v = secrets.password;
          plan_.push({ field: f, value: () => Promise.resolve(v) });
        } else if (f.kind === "otp") {
          const seed = secrets.totp;
          if (!seed) {
            return out(
              false,
              "OTP_UNAVAILABLE",
              "the page asks for a one-time code and no TOTP secret is bound (SMS codes, passkeys and hardware keys are not supported)",
            );
          }
          plan_.push({ field: f, value: () => totpCode(seed, Date.now()) });
        }
      }
      if (plan_.length === 0) {
        return out(false, "FILL_TARGET_REJECTED", "no credential field here takes a bound value");
      }
      // The same form on the same page again: the site refused what was typed.
      const signature = `${here.url}|${here.fields.map((f) => f.kind).join(",")}`;
      if (signature === last) return out(false, "LOGIN_REJECTED", "the site asked again");
      last = signature;
      const last_ = plan_[plan_.length - 1].field;
      const target = here.forms.get(last_.form);
      if (target) {
        // Credentials go only to the page's own origin: a form that submits elsewhere is
        // how a page would carry them off.
        const action = target.action ? new URL(target.action) : undefined;
        if (!action || action.origin !== here.origin) {
          return out(false, "FILL_TARGET_REJECTED", "the login form submits to another origin");
        }
      }
      const frame = (await page.send("Page.getFrameTree")).frameTree.frame;
      const submission = () =>
        target
          ? readFormSubmission(page, frame.id, last_.backendNodeId).catch(() => null)
          : Promise.resolve(null);
      // Where the form submits does not depend on what is typed: checked before any value is.
      const before = await submission();
      if (before && normalizeOrigin(before.url) !== here.origin) {
        return out(false, "FILL_TARGET_REJECTED", "the login form submits to another origin");
      }
      // Open before the first value is typed: a page that sends what it sees typed is refused.
      const hold = plan.openWrite?.();
      let refused: string | undefined;
      try {
        for (const p of plan_) {
          await typeValue(page, p.field.backendNodeId, await p.value());
          filled++;
        }
        steps++;
        // What the form submits once filled, read as the browser builds it: a page listener
        // that adds an entry or swaps the action at submit no longer matches and is refused.
        const write: RuntimeWrite = await submission();
        if (write && normalizeOrigin(write.url) !== here.origin) {
          return out(false, "FILL_TARGET_REJECTED", "the login form submits to another origin");
        }
        hold?.expect(write);
        // The hold stays open until the submission's answer page has loaded: a submission
        // slower than the settle's grace (a busy machine) is waited for, and then its answer,
        // so a page that posts the fields again at once is still the hold's to refuse. A
        // submission that cannot be known (null: the hold admits none) is waited for too: on
        // a busy machine it came after the grace, the hold had closed, and it went out.
        await runAndSettle(
          page,
          async () => {
            await page.send("DOM.focus", { backendNodeId: last_.backendNodeId });
            for (const ev of keyEvents("Enter")) await page.send("Input.dispatchKeyEvent", ev);
          },
          { before: hold ? () => hold.settled(SUBMIT_WAIT_MS) : undefined },
        );
      } finally {
        refused = hold?.close();
      }
      if (refused) {
        return out(
          false,
          "LOGIN_WRITE_REFUSED",
          refused === "LOGIN_ORIGIN_NOT_NAMED"
            ? "the policy's login_submit_origins does not name this origin (LOGIN_ORIGIN_NOT_NAMED); nothing was sent"
            : `the page sent something other than the filled form's own submission (${refused}); it did not leave`,
        );
      }
    }
    return out(false, "LOGIN_FAILED", `still on a login page after ${MAX_LOGIN_STEPS} pages`);
  } catch (err) {
    // Only the error's code or name: a CDP message could quote what was being typed.
    return out(false, "LOGIN_FAILED", `the login stopped: ${errorCode(err) ?? "browser error"}`);
  }
}

/** Replaces a field's text with `value`: focus, select all, then one CDP text insertion. */
async function typeValue(page: CdpSession, backendNodeId: number, value: string): Promise<void> {
  await page.send("DOM.focus", { backendNodeId });
  for (const ev of keyEvents("Control+a")) await page.send("Input.dispatchKeyEvent", ev);
  await page.send("Input.insertText", { text: value });
}

/** The vendor and match number a push page shows, or undefined. */
async function readPush(
  page: CdpSession,
  sel: PushSelectors,
): Promise<{ vendor: string; number: string } | undefined> {
  const { root } = await page.send("DOM.getDocument", { depth: 0 });
  const text = async (selector: string) => {
    const { nodeId } = await page.send("DOM.querySelector", { nodeId: root.nodeId, selector });
    if (!nodeId) return undefined;
    const { outerHTML } = await page.send("DOM.getOuterHTML", { nodeId });
    // Redacted before it is cut (a page may show a secret here; the operator sees this text).
    return redactCut(outerHTML.replace(/<[^>]*>/g, " ").replace(/\s+/g, " ").trim(), 80);
  };
  const vendor = await text(sel.vendor);
  const number = await text(sel.number);
  return vendor && number ? { vendor, number } : undefined;
}

async function waitForUrlChange(page: CdpSession, from: string, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    const { frameTree } = await page.send("Page.getFrameTree");
    if (frameTree.frame.url !== from) {
      // Let the new document finish loading before its fields are read.
      await new Promise((r) => setTimeout(r, 300));
      return;
    }
    await new Promise((r) => setTimeout(r, 200));
  }
}
