/**
 * The audit log: append-only, hash-chained rows in SQLite, mirrored to JSONL on request.
 *
 * @module
 */
export * from "./audit_log.ts";
export * from "./audit_row.ts";
export * from "./jsonl_mirror.ts";
export * from "./verify.ts";
