/**
 * A credential capture from start to end, in its fixed order:
 *
 * 1. the workflow must have the operator's template, and the outputs named must be exactly
 *    the workflow's (one grant each);
 * 2. **one mint per target**: the secret ids the named grants write into are leased, all or
 *    none (`CaptureLeaseStore`), until the capture ends; a target another capture holds
 *    refuses the whole capture `CAPTURE_IN_PROGRESS`, and nothing is submitted;
 * 3. **check before mint**, under the lease: every output's grant is checked (capture grant of
 *    this agent, approved, live, unused, bound to the vendor's origin, the workflow and the
 *    output, its secret id still empty and leased) without writing anything; one failure and
 *    nothing is submitted;
 * 4. the workflow runs (the vendor mints) and every value it reads is guarded at once; a lease
 *    lost meanwhile stops it before its next step (`CAPTURE_LEASE_LOST`);
 * 5. each value is written by an atomic insert-if-absent into its grant's secret id, and
 *    that grant is consumed; the first write or consumption that fails stops the capture
 *    (values already written stay, and are audited).
 *
 * The lease comes before the check: a check passed before another capture wrote its values
 * and let its lease go would pass no more under the lease, so no two captures into one target
 * ever both reach the vendor.
 *
 * Never throws: the outcome is a status and the secret ids written, never a value.
 *
 * @module
 */
import { errorCode } from "../mod.ts";
import type { CdpSession } from "../../cdp/mod.ts";
import type { SecretKind } from "../../vault/mod.ts";
import { type CaptureTarget, GrantError, grantIdShaped, type Grants } from "../grants/mod.ts";
import type { RuntimeWriteHold } from "../login/mod.ts";
import type { CaptureTemplates } from "../policy/mod.ts";
import type { CaptureLease, CaptureLeaseStore } from "../store/mod.ts";
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
  grants: Pick<Grants, "get" | "checkCapture" | "consumeCapture">;
  /** The tenant's capture leases (released by the capture's end, and by its session's). */
  leases: CaptureLeaseStore;
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
  let lease: CaptureLease | undefined;
  try {
    progress("leasing the targets");
    try {
      lease = await leaseTargets(request, deps);
    } catch (err) {
      // The store could not say: fail closed, before any vendor is contacted.
      deps.audit({ origin, decision: "deny", reason: "CAPTURE_UNAVAILABLE" });
      return out(
        false,
        "CAPTURE_UNAVAILABLE",
        `the capture leases could not be taken (${
          errorCode(err) ?? "ERROR"
        }); nothing was submitted`,
      );
    }
    if (lease?.kind === "busy") {
      deps.audit({
        origin,
        decision: "deny",
        reason: "CAPTURE_IN_PROGRESS",
        rule: `${lease.target} held by ${lease.by} until ${lease.until}`,
      });
      return out(
        false,
        "CAPTURE_IN_PROGRESS",
        `another capture is writing into ${lease.target}; nothing was submitted`,
      );
    }
    const held = lease;
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
    // A grant's secret id never changes, so the checked targets are the leased ones; should
    // one not be, the vendor is not contacted unleased.
    const unleased = targets.find((t) => !held?.targets.includes(t.secretId));
    if (unleased) {
      deps.audit({
        origin,
        decision: "deny",
        reason: "CAPTURE_LEASE_LOST",
        rule: unleased.secretId,
      });
      return out(
        false,
        "CAPTURE_LEASE_LOST",
        `${unleased.secretId} is not leased to this capture; nothing was submitted`,
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
          // Each step may contact the vendor: not once another capture may hold the targets.
          if (held!.lost()) {
            throw new CaptureError(
              "CAPTURE_LEASE_LOST",
              `the capture's lease on its targets lapsed before ${s}`,
            );
          }
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
  } finally {
    if (lease?.kind === "held") await lease.release();
  }
}

/**
 * Leases the secret ids the named grants of this agent write into (read, not judged: the
 * check that follows judges them); undefined when no named grant is this agent's (the check
 * refuses them all). Grants of other agents are not looked at, so a model cannot hold
 * another agent's targets by naming its grants.
 */
async function leaseTargets(
  request: CaptureRequest,
  deps: Pick<CaptureDeps, "grants" | "leases">,
): Promise<CaptureLease | undefined> {
  const ids = Object.values(request.outputs).filter(grantIdShaped);
  const grants = await Promise.all(ids.map((id) => deps.grants.get(id)));
  const targets = grants.flatMap((g) =>
    g && request.agent !== null && g.agent === request.agent ? [g.secret_id] : []
  );
  if (targets.length === 0) return undefined;
  return await deps.leases.acquire(targets, request.sessionId);
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
