/**
 * How a credential capture ends, as a stable code the agent, the audit and the console see.
 * A workflow step that finds the vendor's page, callback or answer other than it expects
 * throws a `CaptureError`; `performCapture` turns it into the outcome. A message names the
 * step and never a value.
 *
 * @module
 */
import { OmotaiError } from "../mod.ts";

/** The statuses of a capture (the grant refusals of its check come as their own codes). */
export type CaptureStatus =
  /** Every output was written into its granted secret id. */
  | "CAPTURE_DONE"
  /** The policy has no template for the workflow. */
  | "CAPTURE_UNCONFIGURED"
  /** The runtime has no vault open or no grants, or its capture leases could not be taken. */
  | "CAPTURE_UNAVAILABLE"
  /** The outputs named are not exactly the workflow's outputs. */
  | "CAPTURE_OUTPUTS"
  /** Another capture holds a lease on one of the targets: this one contacted no vendor. */
  | "CAPTURE_IN_PROGRESS"
  /** The capture's lease on its targets lapsed (unrenewed for its TTL) or was never taken. */
  | "CAPTURE_LEASE_LOST"
  /** A page was not on the vendor's origin or lacked what the workflow expects. */
  | "CAPTURE_PAGE_UNEXPECTED"
  /** The hold did not let the step's own request out (the page sent something else). */
  | "CAPTURE_WRITE_REFUSED"
  /** The vendor's callback came to another origin or path, or without a code. */
  | "CAPTURE_CALLBACK_REFUSED"
  /** The callback's state is not the one the runtime sent. */
  | "CAPTURE_STATE_MISMATCH"
  /** The one-time code was older than the vendor keeps it. */
  | "CAPTURE_CODE_EXPIRED"
  /** The vendor's answer was not what the workflow expects (status, shape, a value). */
  | "CAPTURE_VENDOR_ANSWER"
  /** A value was minted but could not be written (its secret id filled meanwhile, a store). */
  | "CAPTURE_WRITE_FAILED"
  /** The browser failed under the workflow (a lost page, a timeout). */
  | "CAPTURE_FAILED";

/** A capture step that could not go on; `code` is the capture's status. */
export class CaptureError extends OmotaiError<CaptureStatus> {}
