/**
 * browser_capture_credentials: registers an app with a vendor (a GitHub App by manifest, a
 * Linear OAuth application) through a reviewed workflow the runtime runs itself, and puts
 * every credential the vendor mints into the vault under the grants the operator approved.
 * The model names the workflow and one grant per output; it gets a status and the secret ids
 * written, never a value. The session is tainted first, whatever the outcome.
 *
 * @module
 */
import { z } from "zod";
import { CAPTURE_WORKFLOWS, type WorkflowName } from "../capture/mod.ts";
import { OmotaiError } from "../mod.ts";
import { navigateFacts } from "./facts.ts";
import { defineTool } from "./tool.ts";

const WORKFLOW_NAMES = Object.keys(CAPTURE_WORKFLOWS) as [WorkflowName, ...WorkflowName[]];
const grantId = z.string().min(1).max(64);
/**
 * Every workflow's outputs as optional keys of one strict object: a key no workflow has (or
 * `__proto__`, which a record would drop unseen) is refused by the schema itself.
 */
const OUTPUTS = z.strictObject(
  Object.fromEntries(
    [...new Set(Object.values(CAPTURE_WORKFLOWS).flatMap((w) => w.outputs))]
      .map((o) => [o, grantId.optional()]),
  ),
);

export const captureTool = defineTool({
  name: "browser_capture_credentials",
  title: "Capture generated credentials into the vault",
  description:
    "Register an app with a vendor through the runtime's reviewed workflow (github_app: a " +
    "GitHub App by manifest, outputs pem, client_secret, webhook_secret; linear_oauth_app: a " +
    "Linear OAuth application, outputs client_id, client_secret). The runtime fills and " +
    "submits everything from the operator's template and writes each minted value into the " +
    "vault under the capture grant you name for that output; you get a status and the secret " +
    "ids written, never a value. The session is tainted from the start: afterwards only " +
    "status-only snapshots, browser_login, this tool, browser_close and dismissing a dialog run.",
  schema: z.strictObject({
    workflow: z.enum(WORKFLOW_NAMES).describe("The reviewed workflow to run"),
    outputs: OUTPUTS.describe(
      'One capture grant id per output of the workflow, e.g. {"pem": "g_…"}',
    ),
  }),
  kind: "navigate",
  readOnly: false,
  destructive: false,
  // The workflow's first page is the operator's template's: the gate judges going there.
  facts: (ctx, { workflow }) => {
    if (!ctx.capture) {
      throw new OmotaiError("CAPTURE_UNAVAILABLE", "this runtime has no vault or no grants");
    }
    const start = ctx.capture.startUrl(workflow);
    if (!start) {
      throw new OmotaiError<string>(
        "CAPTURE_UNCONFIGURED",
        `the policy has no capture template for ${workflow}`,
      );
    }
    return navigateFacts(ctx, start);
  },
  async handle(ctx, { workflow, outputs }) {
    const service = ctx.capture;
    if (!service) {
      throw new OmotaiError("CAPTURE_UNAVAILABLE", "this runtime has no vault or no grants");
    }
    const { session } = ctx;
    // Tainted first: the vendor's pages show what it minted, whatever happens next.
    session.state.taint("capture");
    const page = await session.page();
    // The workflow answers no dialog and is not cut short by one.
    const dialogsBack = session.guard.dialogs.dismissUnseen();
    let outcome;
    try {
      outcome = await service.capture(page, {
        agent: session.agent,
        sessionId: session.id,
        workflow,
        outputs: Object.fromEntries(
          Object.entries(outputs).filter((e): e is [string, string] => typeof e[1] === "string"),
        ),
      }, {
        audit: (row) =>
          session.audit({
            kind: "capture",
            source: "action",
            origin: row.origin ?? undefined,
            decision: row.decision,
            reason: row.reason,
            rule: row.rule,
          }),
        progress: (line) => session.state.setActivity(`capture ${line}`),
        onEnd: (fn) => session.onEnd(fn),
      });
    } finally {
      dialogsBack();
    }
    // The console keeps the outcome beside the session once the steps are done.
    session.state.setActivity(`capture ${workflow}: ${outcome.status}`);
    const written = outcome.written.length > 0
      ? `; written: ${outcome.written.map((w) => `${w.output} -> ${w.secretId}`).join(", ")}`
      : outcome.ok || /nothing was written/.test(outcome.message)
      ? ""
      : "; nothing was written";
    const line =
      `capture: ${outcome.status} (${outcome.message}${written}); the session is tainted: only browser_snapshot and browser_find (status only), browser_login, browser_capture_credentials, browser_close and browser_handle_dialog {"accept": false} run now`;
    if (!outcome.ok) throw new OmotaiError<string>(outcome.status, line);
    ctx.response.result(line);
  },
});
