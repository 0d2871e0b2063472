/**
 * The `github_app` workflow: GitHub's app-manifest flow, run by the runtime on github.com or
 * a GitHub Enterprise Server.
 *
 * 1. Opens the vendor's origin and posts the manifest (the operator's template, with the
 *    runtime's own `redirect_url`) to `/settings/apps/new?state=…` from a form the runtime
 *    builds in its isolated world; `state` is one-time and random.
 * 2. On the vendor's confirmation page, submits its one `form#new_integration_manifest`.
 * 3. The vendor redirects to `redirect_url` with `code` and `state`. The runtime set that URL
 *    on the vendor's own origin, so the code goes nowhere else; it reads the tab's URL and
 *    accepts it only on that origin and path, with the state it sent.
 * 4. Converts the code within the hour: `POST {api}/app-manifests/{code}/conversions` from
 *    its isolated world, and reads `pem`, `client_secret` and `webhook_secret` from the answer.
 *
 * Each request leaves under the capture's write hold (exactly it, to the template's origins).
 * The code and every minted value are guarded the moment they are read.
 *
 * @module
 */
import { z } from "zod";
import type { GithubAppTemplate } from "../policy/mod.ts";
import { CaptureError } from "./capture_error.ts";
import {
  here,
  inWorld,
  leave,
  only,
  open,
  requireOrigin,
  sendNavigation,
  submitForm,
} from "./page_steps.ts";
import { type CaptureWorkflow, secretShaped } from "./workflow.ts";
import { readFormSubmission } from "../login/mod.ts";

/** The path of the runtime's callback on the vendor's origin. */
export const GITHUB_CALLBACK_PATH = "/omotai-capture/github_app/callback";
/** The vendor's confirmation form (GitHub's markup; a change there is refused, not guessed). */
export const GITHUB_CONFIRM_FORM = "form#new_integration_manifest";
/** How long GitHub keeps a manifest code. */
const CODE_LIFETIME_MS = 60 * 60 * 1000;
/** The most of the conversion's answer the runtime reads. */
const MAX_ANSWER_CHARS = 256 * 1024;

// Builds and submits the manifest form in the isolated world: the page's own script never
// sees it before it leaves (its action and its one entry are exactly what the hold expects).
const POST_FORM = `function (action, name, value) {
  const form = document.createElement("form");
  form.method = "post";
  form.action = action;
  form.enctype = "application/x-www-form-urlencoded";
  form.target = "_self";
  form.style.display = "none";
  const input = document.createElement("input");
  input.type = "hidden";
  input.name = name;
  input.value = value;
  form.appendChild(input);
  document.documentElement.appendChild(form);
  HTMLFormElement.prototype.submit.call(form);
  return true;
}`;

// The conversion, from the isolated world: no cookie, no cache, no redirect followed.
const CONVERT = `async function (url) {
  const r = await fetch(url, { method: "POST", credentials: "omit", cache: "no-store",
    redirect: "error", headers: { accept: "application/vnd.github+json" } });
  const text = await r.text();
  return { status: r.status, text: text.length > ${MAX_ANSWER_CHARS} ? null : text };
}`;

/** A manifest code as GitHub issues them (20 hex characters today). */
const CODE_RE = /^[A-Za-z0-9_.-]{16,128}$/;
/** A PEM private key, and nothing around it. */
const PEM_RE =
  /^-----BEGIN [A-Z ]*PRIVATE KEY-----\n[A-Za-z0-9+/=\n]{64,16384}\n-----END [A-Z ]*PRIVATE KEY-----\n?$/;

const ConversionSchema = z.object({
  id: z.number(),
  slug: z.string().min(1).max(200),
  pem: z.string().regex(PEM_RE),
  client_secret: z.string().refine(secretShaped),
  webhook_secret: z.string().refine(secretShaped),
});

/** The origin of the template's vendor. */
function baseOrigin(t: GithubAppTemplate): string {
  return new URL(t.base_url).origin;
}

/** The REST API's base: the template's, or GitHub's for github.com, or the server's `/api/v3`. */
export function githubApiBase(t: GithubAppTemplate): string {
  if (t.api_url) return t.api_url.replace(/\/+$/, "");
  const base = new URL(t.base_url);
  return base.hostname === "github.com" ? "https://api.github.com" : `${base.origin}/api/v3`;
}

const runGithubApp: CaptureWorkflow<GithubAppTemplate>["run"] = async (ctx, t) => {
  const { page } = ctx;
  const origin = baseOrigin(t);
  const state = Array.from(crypto.getRandomValues(new Uint8Array(20)))
    .map((b) => b.toString(16).padStart(2, "0")).join("");
  const callback = new URL(GITHUB_CALLBACK_PATH, origin);
  const manifest = JSON.stringify({ ...t.manifest, redirect_url: callback.href });
  const action = new URL(
    t.organization
      ? `/organizations/${encodeURIComponent(t.organization)}/settings/apps/new`
      : "/settings/apps/new",
    origin,
  );
  action.searchParams.set("state", state);

  ctx.step("opening the vendor's page");
  await open(page, `${origin}/`, "the vendor's page");

  ctx.step("submitting the manifest");
  await sendNavigation(
    page,
    ctx.hold,
    { method: "POST", url: action.href, entries: [["manifest", manifest]] },
    () => inWorld<boolean>(page, POST_FORM, [action.href, "manifest", manifest]).then(() => {}),
    "the manifest",
  );

  ctx.step("confirming the app on the vendor's page");
  const confirm = await requireOrigin(page, origin, "the confirmation page");
  await only(page, GITHUB_CONFIRM_FORM, "confirmation form");
  const button = await only(
    page,
    `${GITHUB_CONFIRM_FORM} button[type=submit], ${GITHUB_CONFIRM_FORM} input[type=submit]`,
    "confirmation button",
  );
  const submission = await readFormSubmission(page, confirm.frameId, button);
  if (
    !submission || submission.method !== "POST" ||
    new URL(submission.url).origin !== origin
  ) {
    throw new CaptureError(
      "CAPTURE_PAGE_UNEXPECTED",
      "the confirmation form does not post to the vendor's origin",
    );
  }
  const confirmedAt = Date.now();
  // From the confirmation on, no page script runs in the tab: the document the code comes
  // back to (and any a vendor's page would open to fish for it) cannot read its URL, and no
  // vendor script can race the runtime's conversion.
  let answer: { status: number; text: string | null } | undefined;
  try {
    // Inside the try: a call that timed out after Chromium applied it is undone below too.
    await page.send("Emulation.setScriptExecutionDisabled", { value: true });
    await submitForm(page, ctx.hold, submission, button, "the confirmation");

    ctx.step("reading the vendor's callback");
    const back = await here(page);
    let url: URL;
    try {
      url = new URL(back.url);
    } catch {
      throw new CaptureError("CAPTURE_CALLBACK_REFUSED", "the vendor did not call back");
    }
    const code = url.searchParams.get("code") ?? "";
    const codeShaped = CODE_RE.test(code);
    // Hidden before anything else reads the URL: whoever holds the code can convert it. Only
    // a code shaped like GitHub's: the guard is process-wide, and a vendor must not make an
    // ordinary string a secret.
    if (codeShaped) ctx.guard([code]);
    if (url.origin !== origin || url.pathname !== callback.pathname) {
      throw new CaptureError(
        "CAPTURE_CALLBACK_REFUSED",
        `the callback came to ${url.origin === origin ? "another path" : "another origin"}`,
      );
    }
    if (url.searchParams.get("state") !== state) {
      throw new CaptureError(
        "CAPTURE_STATE_MISMATCH",
        "the callback's state is not the one the runtime sent",
      );
    }
    if (!codeShaped) {
      throw new CaptureError("CAPTURE_CALLBACK_REFUSED", "the callback carries no code");
    }
    if (Date.now() - confirmedAt > CODE_LIFETIME_MS) {
      throw new CaptureError("CAPTURE_CODE_EXPIRED", "the code is older than an hour");
    }

    ctx.step("converting the code");
    // From the callback's document on the vendor's origin (same-origin on an Enterprise
    // Server), scripts still off: the hold admits exactly this POST, with no body.
    const conversion = `${githubApiBase(t)}/app-manifests/${encodeURIComponent(code)}/conversions`;
    let admitted = false;
    try {
      ctx.hold.expect({ method: "POST", url: conversion, entries: [], request: "fetch" });
      answer = await inWorld<{ status: number; text: string | null }>(page, CONVERT, [
        conversion,
      ]).catch(() => undefined);
    } finally {
      admitted = ctx.hold.admitted;
      ctx.hold.expect(null);
    }
    if (!admitted) {
      throw new CaptureError("CAPTURE_WRITE_REFUSED", "the conversion did not leave the browser");
    }
  } finally {
    await leave(page);
    await page.send("Emulation.setScriptExecutionDisabled", { value: false }).catch(() => {});
  }
  if (!answer || typeof answer.text !== "string") {
    throw new CaptureError("CAPTURE_VENDOR_ANSWER", "the vendor's conversion did not answer");
  }
  let json: unknown;
  try {
    json = JSON.parse(answer.text);
  } catch {
    throw new CaptureError("CAPTURE_VENDOR_ANSWER", "the conversion's answer is not JSON");
  }
  // Each output guarded as soon as it is shaped like one, before the answer as a whole is
  // judged: a malformed answer may still hold real secrets. Nothing else in it is guarded.
  const record = json !== null && typeof json === "object" ? json as Record<string, unknown> : {};
  ctx.guard([
    ...(typeof record.pem === "string" && PEM_RE.test(record.pem) ? [record.pem] : []),
    ...[record.client_secret, record.webhook_secret].filter(secretShaped),
  ]);
  if (answer.status !== 201 && answer.status !== 200) {
    throw new CaptureError(
      "CAPTURE_VENDOR_ANSWER",
      `the conversion answered ${answer.status}`,
    );
  }
  const parsed = ConversionSchema.safeParse(json);
  if (!parsed.success) {
    throw new CaptureError(
      "CAPTURE_VENDOR_ANSWER",
      `the conversion's answer lacks ${parsed.error.issues[0]?.path.join(".") || "a field"}`,
    );
  }
  const { pem, client_secret, webhook_secret } = parsed.data;
  return { pem, client_secret, webhook_secret };
};

/** The `github_app` workflow. */
export const githubApp: CaptureWorkflow<GithubAppTemplate> = {
  name: "github_app",
  outputs: ["pem", "client_secret", "webhook_secret"],
  origin: baseOrigin,
  reach: (t) => [...new Set([baseOrigin(t), new URL(githubApiBase(t)).origin])],
  run: runGithubApp,
};
