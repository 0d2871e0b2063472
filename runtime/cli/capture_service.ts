/**
 * The runtime's credential capture for `browser_capture_credentials`: runs a reviewed
 * workflow (`runtime/capture/`) with the policy's template, the tenant's grants and vault,
 * the policy world's boundary for its write holds, and the process redactor and egress guard
 * for every value it reads. The model reaches none of this: it gets a status.
 *
 * @module
 */
import type { Vault } from "../../vault/mod.ts";
import { CAPTURE_WORKFLOWS, performCapture } from "../capture/mod.ts";
import type { Boundary } from "../gate/mod.ts";
import type { Grants } from "../grants/mod.ts";
import type { CaptureTemplates } from "../policy/mod.ts";
import { egressSecrets, type Redactor } from "../redact/mod.ts";
import type { CaptureLeaseStore } from "../store/mod.ts";
import type { CaptureService } from "../tools/mod.ts";
import { openRuntimeWrite } from "./runtime_write.ts";

/** What the capture service is built from. */
export interface CaptureServiceDeps {
  grants: Grants;
  /** The tenant's capture leases: one capture into a target at a time, on every runtime. */
  leases: CaptureLeaseStore;
  /** The open vault; none when the runtime was started without a vault key. */
  vault?: Vault;
  redactor: Redactor;
  boundary: Pick<Boundary, "openHold" | "confine">;
  /** The policy's `capture:` templates. */
  templates: CaptureTemplates | undefined;
}

/** The CaptureService of a runtime. */
export function grantCaptureService(deps: CaptureServiceDeps): CaptureService {
  return {
    startUrl(workflow) {
      if (workflow === "github_app" && deps.templates?.github_app) {
        return `${new URL(deps.templates.github_app.base_url).origin}/`;
      }
      if (workflow === "linear_oauth_app" && deps.templates?.linear_oauth_app) {
        return deps.templates.linear_oauth_app.registration_url;
      }
      return undefined;
    },
    async capture(page, request, session) {
      const vault = deps.vault;
      if (!vault) {
        try {
          session.audit({ origin: null, decision: "deny", reason: "VAULT_UNAVAILABLE" });
        } catch {
          // The outcome says it: nothing was submitted.
        }
        return {
          ok: false,
          status: "VAULT_UNAVAILABLE",
          written: [],
          message:
            "the runtime was started without OMOTAI_VAULT_KEY or OMOTAI_VAULT_PASSPHRASE; nothing was submitted",
        };
      }
      if (!(request.workflow in CAPTURE_WORKFLOWS)) {
        return {
          ok: false,
          status: "CAPTURE_UNCONFIGURED",
          written: [],
          message: "no such workflow",
        };
      }
      return await performCapture(page, request, {
        grants: deps.grants,
        leases: {
          async acquire(targets, holder) {
            const lease = await deps.leases.acquire(targets, holder);
            // Let go when the session ends too, should the capture not reach its own end.
            if (lease.kind === "held") session.onEnd(() => void lease.release());
            return lease;
          },
        },
        vault,
        templates: deps.templates,
        confine: (origins) => session.onEnd(deps.boundary.confine(request.sessionId, origins)),
        openWrite: (origins) =>
          openRuntimeWrite(deps.boundary, request.sessionId, origins, "capture"),
        guard(values) {
          deps.redactor.add([...values]);
          // A minted value never leaves the browser again (the conversion's code is spent).
          egressSecrets().add([...values]);
        },
        audit: session.audit,
        progress: session.progress,
      });
    },
  };
}
