/**
 * Redaction: secret values and their encodings turned into `[redacted]` wherever text
 * leaves the runtime (logs, the audit, tool results, errors), and page text redacted before
 * it is shortened (`redactCut()`). See docs/redaction.md.
 *
 * @module
 */
export * from "./cut.ts";
export * from "./egress_secrets.ts";
export * from "./process_redactor.ts";
export * from "./redactor.ts";
export { MIN_SECRET_LENGTH, secretForms } from "./secret_forms.ts";
export { PARTIAL_RUN_LENGTH } from "./skeleton.ts";
