/**
 * The door of runtime/audit/ (hash-chained audit log, mirror, verify; its store port and PostgreSQL
 * adapter): other folders import from this file only.
 *
 * @module
 */

// Other folders' imports (kept by tests/helpers/doors.ts: run it with --write, do not edit below).
export { AuditLog } from "./audit_log.ts";
export type { AuditEvent, AuditRow, AuditSink, AuditWriter } from "./audit_row.ts";
export { sqliteAuditStore } from "./audit_store.ts";
export type { AuditStore, CheckpointCheck } from "./audit_store.ts";
export { importCheckpointPublicKey } from "./checkpoint.ts";
export {
  CHECKPOINT_FILE,
  CHECKPOINT_PUB_FILE,
  Checkpointer,
  checkpointKeyIn,
  readCheckpoints,
} from "./checkpointer.ts";
export { JsonlMirror } from "./jsonl_mirror.ts";
export { PgAuditLog } from "./pg_audit_log.ts";
export { PgAuditSink } from "./pg_audit_sink.ts";
export { parseAge, verifyJsonl } from "./verify.ts";
export type { VerifyResult } from "./verify.ts";
