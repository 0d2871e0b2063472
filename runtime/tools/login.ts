/**
 * browser_login: signs in on the current page with the credentials an operator granted this
 * agent for the page's origin (read from CDP, never from the model). The runtime types the
 * values into credential fields only, and the model gets a status line: never a value, a
 * code or the page. Under `taint_after_login: session` (the default) the session is tainted
 * before anything is redeemed, whatever the outcome.
 *
 * @module
 */
import { z } from "zod";
import { type LoginStatus, performLogin } from "../login/mod.ts";
import { OmotaiError } from "../mod.ts";
import { pageFacts } from "./facts.ts";
import { defineTool } from "./tool.ts";

export const loginTool = defineTool({
  name: "browser_login",
  title: "Sign in with granted credentials",
  description:
    "Sign in on the current page with the credentials the operator granted you for this site. " +
    "The runtime fills and submits the login form itself; you get a status, never the values. " +
    "After it, the session may be tainted: only status-only snapshots, browser_close and " +
    "dismissing a dialog (whose text is then not shown) run.",
  schema: z.strictObject({
    grants: z.array(z.string().min(1).max(64)).max(8).optional().describe(
      "Grant ids to use (default: every grant bound to you for this page's origin)",
    ),
  }),
  kind: "key",
  readOnly: false,
  destructive: false,
  facts: (ctx) => pageFacts(ctx, "key"),
  async handle(ctx, { grants }) {
    const service = ctx.login;
    if (!service) {
      throw new OmotaiError("LOGIN_UNAVAILABLE", "this runtime has no vault or no grants");
    }
    const { session } = ctx;
    // Tainted first: a failed login, a CAPTCHA or a changed form must not undo it.
    if (service.taintAfterLogin === "session") session.state.taint("login");
    const page = await session.page();
    const { frameTree } = await page.send("Page.getFrameTree", undefined, { timeoutMs: 5_000 });
    const origin = originOf(frameTree.frame.url);
    const { plan, secrets } = await service.redeem({
      agent: session.agent,
      sessionId: session.id,
      origin,
      grantIds: grants,
    });
    using _seed = secrets.totp;
    const outcome = await performLogin(
      page,
      plan,
      secrets,
      service.push?.({ id: session.id, agent: session.agent }),
    );
    session.audit({
      kind: "login",
      source: "action",
      origin,
      decision: outcome.ok ? "allow" : "deny",
      reason: outcome.status,
    });
    const taint = session.state.tainted
      ? '; the session is tainted: only browser_snapshot and browser_find (status only), browser_close and browser_handle_dialog {"accept": false} run now'
      : "";
    const line =
      `login: ${outcome.status} (${outcome.message}; ${outcome.filled} field(s) on ${outcome.steps} page(s))${taint}`;
    if (!outcome.ok) throw new OmotaiError<LoginStatus>(outcome.status, line);
    ctx.response.result(line);
  },
});

function originOf(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return "null";
  }
}
