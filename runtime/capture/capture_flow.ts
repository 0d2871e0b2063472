/**
 * A credential capture from start to end, in its fixed order:
 *
 * 1. the workflow must have the operator's template, and the outputs named must be exactly
 *    the workflow's (one grant each);
 * 2. **check before mint**: every output's grant is checked (capture grant of this agent,
 *    approved, live, unused, bound to the vendor's origin, the workflow and the output, its
 *    secret id still empty) without writing anything; one failure and nothing is submitted;
 * 3. the workflow runs (the vendor mints) and every value it reads is guarded at once;
 * 4. each value is written by an atomic insert-if-absent into its grant's secret id, and
 *    that grant is consumed; the first write or consumption that fails stops the capture
 *    (values already written stay, and are audited).
 *
 * Never throws: the outcome is a status and the secret ids written, never a value.
 *
 * @module
 */
import { errorCode } from "../errors.ts";
import type { CdpSession } from "../../cdp/mod.ts";
import type { SecretKind } from "../../vault/mod.ts";
import type { CaptureTarget } from "../grants/capture_checks.ts";
import { GrantError } from "../grants/errors.ts";
import type { GrantPort } from "../grants/mod.ts";
import type { RuntimeWriteHold } from "../login/login_flow.ts";
import type { CaptureTemplates } from "../policy/capture_templates.ts";
import { CaptureError, type CaptureStatus } from "./capture_error.ts";
import { githubApp } from "./github_app.ts";
import { linearOauthApp } from "./linear_oauth_app.ts";
import type { CaptureWorkflow } from "./workflow.ts";

/** The workflows the runtime runs, by name. */
export const CAPTURE_WORKFLOWS = {
  github_app: githubApp,
  linear_oauth_app: linearOauthApp,
} as const;

/** A workflow's name. */
export type WorkflowName = keyof typeof CAPTURE_WORKFLOWS;

/** What the model asks for: a workflow, and one grant id per output. */
export interface CaptureRequest {
  agent: string | null;
  sessionId: string;
  workflow: WorkflowName;
  /** Output name → grant id. */
  outputs: Readonly<Record<string, string>>;
}

/** One row of the capture's own audit (the grants' rows come from the grant store). */
export interface CaptureAuditRow {
  origin: string | null;
  decision: "allow" | "deny" | "event";
  /** The step or the status; never a value. */
  reason: string;
  /** The output and secret id a write row is about. */
  rule?: string;
}

/** What a capture is built from. */
export interface CaptureDeps {
  grants: Pick<GrantPort, "checkCapture" | "consumeCapture">;
  vault: { addIfAbsent(id: string, kind: SecretKind, value: string): Promise<unknown> };
  templates: CaptureTemplates | undefined;
  /** Opens the capture's write hold naming `origins`. */
  openWrite(origins: readonly string[]): () => RuntimeWriteHold;
  /**
   * Confines the session to `origins` from now until the session ends (what a vendor's page
   * started may outlive the workflow; the session is tainted anyway).
   */
  confine(origins: readonly string[]): void;
  /** Hides values from every output (redactor and egress guard). */
  guard(values: readonly string[]): void;
  /** Appends one audit row of the session (a throw stops the capture before its next step). */
  audit(row: CaptureAuditRow): void;
  /** The console's progress line for the session: each step as it starts. */
  progress?(line: string): void;
}

/** How a capture ended. */
export interface CaptureOutcome {
  ok: boolean;
  /** A `CaptureStatus`, or the grant refusal of the check (`GRANT_EXPIRED`...). */
  status: CaptureStatus | string;
  /** The outputs written, in order: output and secret id, never a value. */
  written: { output: string; secretId: string }[];
  message: string;
}

/** Runs a capture on `page`. */
export async function performCapture(
  page: CdpSession,
  request: CaptureRequest,
  deps: CaptureDeps,
): Promise<CaptureOutcome> {
  const written: CaptureOutcome["written"] = [];
  const name = request.workflow;
  const out = (ok: boolean, status: string, message: string): CaptureOutcome => ({
    ok,
    status,
    written: [...written],
    message,
  });
  const workflow = CAPTURE_WORKFLOWS[name] as CaptureWorkflow<unknown> | undefined;
  const template = deps.templates?.[name];
  if (!workflow || !template) {
    return refused(
      deps,
      out,
      "CAPTURE_UNCONFIGURED",
      `the policy has no capture template for ${name}`,
    );
  }
  const named = Object.keys(request.outputs).sort();
  const wanted = [...workflow.outputs].sort();
  if (named.join(",") !== wanted.join(",")) {
    return refused(
      deps,
      out,
      "CAPTURE_OUTPUTS",
      `${name} mints ${workflow.outputs.join(", ")}: name a grant for each, and nothing else`,
    );
  }
  const origin = workflow.origin(template);
  const progress = (line: string) => deps.progress?.(`${name}: ${line}`);
  try {
    progress("checking the grants");
    let targets: CaptureTarget[];
    try {
      targets = await deps.grants.checkCapture({
        agent: request.agent,
        origin,
        workflow: name,
        outputs: workflow.outputs.map((output) => ({
          output,
          grantId: request.outputs[output],
        })),
        sessionId: request.sessionId,
      });
    } catch (err) {
      // A grant's own refusal names its output and grant; a store's failure is only a code.
      const own = err instanceof GrantError;
      const code = own
        ? err.code
        : errorCode(err) === "AUDIT_UNAVAILABLE"
        ? "AUDIT_UNAVAILABLE"
        : "GRANTS_UNAVAILABLE";
      deps.audit({ origin, decision: "deny", reason: code });
      return out(
        false,
        code,
        `${own ? err.message : "the grants could not be checked"}; nothing was submitted`,
      );
    }
    let values: Record<string, string>;
    const reach = workflow.reach(template);
    deps.confine(reach);
    // One hold for the whole workflow: between its steps nothing of the session is written.
    const hold = deps.openWrite(reach)();
    try {
      values = await workflow.run({
        page,
        hold,
        guard: (v) => deps.guard(v),
        step: (s) => {
          progress(s);
          deps.audit({ origin, decision: "event", reason: "CAPTURE_STEP", rule: s });
        },
      }, template);
    } catch (err) {
      const code = err instanceof CaptureError ? err.code : "CAPTURE_FAILED";
      const message = err instanceof CaptureError
        ? err.message
        : "the browser failed under the workflow";
      deps.audit({ origin, decision: "deny", reason: code });
      return out(false, code, `${message}; nothing was written`);
    } finally {
      hold.close();
    }
    for (const target of targets) {
      const value = values[target.output];
      const where = `${target.output} -> ${target.secretId}`;
      if (typeof value !== "string" || value === "") {
        deps.audit({ origin, decision: "deny", reason: "CAPTURE_VENDOR_ANSWER", rule: where });
        return out(false, "CAPTURE_VENDOR_ANSWER", `the vendor gave no ${target.output}`);
      }
      try {
        await deps.vault.addIfAbsent(target.secretId, "generic", value);
      } catch (err) {
        const code = errorCode(err) === "SECRET_EXISTS"
          ? "CAPTURE_TARGET_OCCUPIED"
          : "VAULT_UNAVAILABLE";
        deps.audit({ origin, decision: "deny", reason: "CAPTURE_WRITE_FAILED", rule: where });
        return out(
          false,
          "CAPTURE_WRITE_FAILED",
          `${target.output} could not be written into ${target.secretId} (${code}); the capture stopped${
            written.length ? " after writing the outputs listed" : ""
          }`,
        );
      }
      written.push({ output: target.output, secretId: target.secretId });
      // Consumed before the row: a row that cannot be kept must not leave the grant live.
      try {
        await deps.grants.consumeCapture(target.grantId, {
          agent: request.agent,
          origin,
          workflow: name,
          output: target.output,
          sessionId: request.sessionId,
        });
      } catch (err) {
        deps.audit({ origin, decision: "deny", reason: "CAPTURE_WRITE_FAILED", rule: where });
        return out(
          false,
          "CAPTURE_WRITE_FAILED",
          `${target.output} was written into ${target.secretId} but its grant could not be marked used (${
            err instanceof GrantError ? err.code : "GRANTS_UNAVAILABLE"
          }); the capture stopped`,
        );
      }
      deps.audit({ origin, decision: "allow", reason: "CAPTURE_WRITTEN", rule: where });
    }
    deps.audit({ origin, decision: "allow", reason: "CAPTURE_DONE" });
    return out(true, "CAPTURE_DONE", `${name} registered; every output is in the vault`);
  } catch (err) {
    // An audit row that could not be kept: stop, and say which outputs were written.
    const code = errorCode(err) === "AUDIT_UNAVAILABLE" ? "AUDIT_UNAVAILABLE" : "CAPTURE_FAILED";
    return out(false, code, "the capture stopped (audit unavailable)");
  }
}

/** A refusal before any grant is looked at: its row, then the outcome. */
function refused(
  deps: Pick<CaptureDeps, "audit">,
  out: (ok: boolean, status: string, message: string) => CaptureOutcome,
  status: CaptureStatus,
  message: string,
): CaptureOutcome {
  try {
    deps.audit({ origin: null, decision: "deny", reason: status });
  } catch {
    return out(false, "AUDIT_UNAVAILABLE", `${message}; its refusal could not be audited`);
  }
  return out(false, status, message);
}
