/**
 * The `linear_oauth_app` workflow: registers a Linear OAuth application on the workspace's
 * registration page and reads the client id and secret Linear shows once.
 *
 * 1. Opens `registration_url`; the document must be on its origin.
 * 2. Fills the one `form#oauth-application-form` from the operator's template, field by field
 *    through the workflow's fixed selectors, by CDP input; reads what the form will submit
 *    and insists that it posts to the same origin with exactly the template's values.
 * 3. Submits it under the capture's write hold (exactly that submission leaves).
 * 4. On the answer page (same origin), reads `#oauth-client-id` and `#oauth-client-secret`,
 *    guards both at once, and leaves the page.
 *
 * A page without one of these elements, or with values not shaped like Linear's, fails
 * closed before anything is written.
 *
 * @module
 */
import { readFormSubmission } from "../login/mod.ts";
import type { LinearOauthAppTemplate } from "../policy/mod.ts";
import { CaptureError } from "./capture_error.ts";
import { inWorld, leave, only, open, requireOrigin, submitForm, typeInto } from "./page_steps.ts";
import { type CaptureWorkflow, secretShaped } from "./workflow.ts";

/** The registration form (Linear's markup; a change there is refused, not guessed). */
export const LINEAR_FORM = "form#oauth-application-form";
/** The answer page's client id and secret. */
export const LINEAR_CLIENT_ID = "#oauth-client-id";
export const LINEAR_CLIENT_SECRET = "#oauth-client-secret";

/** Each form field the workflow fills (its control and name), and the template value it gets. */
const FIELDS: readonly [string, string, (t: LinearOauthAppTemplate) => string][] = [
  ["input", "name", (t) => t.application.name],
  ["input", "developer", (t) => t.application.developer],
  ["input", "developerUrl", (t) => t.application.developer_url],
  ["textarea", "description", (t) => t.application.description],
  ["textarea", "redirectUris", (t) => t.application.callback_urls.join("\n")],
];

const TEXT = `function () {
  return Object.getOwnPropertyDescriptor(Node.prototype, "textContent").get.call(this);
}`;

function origin(t: LinearOauthAppTemplate): string {
  return new URL(t.registration_url).origin;
}

const runLinearOauthApp: CaptureWorkflow<LinearOauthAppTemplate>["run"] = async (ctx, t) => {
  const { page } = ctx;
  const at = origin(t);

  ctx.step("opening the registration page");
  const doc = await open(page, t.registration_url, "the registration page");
  await only(page, LINEAR_FORM, "registration form");

  ctx.step("filling the registration form");
  for (const [control, name, value] of FIELDS) {
    const node = await only(page, `${LINEAR_FORM} ${control}[name="${name}"]`, `field ${name}`);
    await typeInto(page, node, value(t));
  }
  const button = await only(page, `${LINEAR_FORM} button[type=submit]`, "submit button");
  const submission = await readFormSubmission(page, doc.frameId, button);
  const want = new Map(FIELDS.map(([, name, v]) => [name, v(t).replace(/\r?\n/g, "\r\n")]));
  const same = submission !== null && submission.method === "POST" &&
    new URL(submission.url).origin === at &&
    [...want].every(([name, value]) => {
      const got = submission.entries.filter(([n]) => n === name);
      return got.length === 1 && got[0][1].replace(/\r?\n/g, "\r\n") === value;
    });
  if (!same) {
    throw new CaptureError(
      "CAPTURE_PAGE_UNEXPECTED",
      "the registration form does not submit the template's values to its own origin",
    );
  }

  ctx.step("submitting the registration");
  try {
    // Inside the try: once the submission may have left, the tab leaves whatever it shows.
    await submitForm(page, ctx.hold, submission!, button, "the registration");
    ctx.step("reading the client id and secret");
    await requireOrigin(page, at, "the registration's answer");
    const idNode = await only(page, LINEAR_CLIENT_ID, "client id");
    const secretNode = await only(page, LINEAR_CLIENT_SECRET, "client secret");
    const clientId = String(await inWorld<string>(page, TEXT, [], idNode) ?? "").trim();
    const secret = String(await inWorld<string>(page, TEXT, [], secretNode) ?? "").trim();
    // Guarded only when shaped like Linear's: the guard is process-wide.
    ctx.guard([clientId, secret].filter(secretShaped));
    if (!secretShaped(clientId) || !secretShaped(secret)) {
      throw new CaptureError(
        "CAPTURE_VENDOR_ANSWER",
        "the page's client id or secret is not shaped like Linear's",
      );
    }
    return { client_id: clientId, client_secret: secret };
  } finally {
    // The answer page shows the secret: the tab leaves it whatever happened.
    await leave(page);
  }
};

/** The `linear_oauth_app` workflow. */
export const linearOauthApp: CaptureWorkflow<LinearOauthAppTemplate> = {
  name: "linear_oauth_app",
  outputs: ["client_id", "client_secret"],
  origin,
  reach: (t) => [origin(t)],
  run: runLinearOauthApp,
};
