/**
 * Redaction: secret values and their encodings turned into `[redacted]` wherever text
 * leaves the runtime (logs, the audit, tool results, errors). See docs/redaction.md.
 *
 * @module
 */
export * from "./process_redactor.ts";
export * from "./redactor.ts";
