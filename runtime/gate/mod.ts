/**
 * The door of runtime/gate/ (the gate, boundary, approver port, audit rows): other folders import
 * from this file only.
 *
 * @module
 */

// Other folders' imports (kept by tests/helpers/doors.ts: run it with --write, do not edit below).
export { unavailableApprover } from "./approver.ts";
export type { ApprovalOutcome, Approver, PendingApproval } from "./approver.ts";
export { actionRow } from "./audit_rows.ts";
export type { RequestContext } from "./audit_rows.ts";
export { Boundary } from "./boundary.ts";
export type { ProxyRequest } from "./boundary.ts";
export { decide } from "./gate.ts";
export type { Gate, GateVerdict } from "./gate.ts";
export { PolicyGate } from "./policy_gate.ts";
export { runtimeHold } from "./write_hold.ts";
export type { HeldWrite } from "./write_hold.ts";
