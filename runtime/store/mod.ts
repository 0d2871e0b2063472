/**
 * The door of runtime/store/ (persistence: SQLite and PostgreSQL databases, migrations, tenants;
 * per concept one …Store port, its adapters and contract suite): other folders import from this
 * file only.
 *
 * @module
 */

// Other folders' imports (kept by tests/helpers/doors.ts: run it with --write, do not edit below).
export type { AgentInfo, AgentStore } from "./agent_store.ts";
export { asPromise } from "./as_promise.ts";
export { verifyRows } from "./audit_chain.ts";
export type { ChainCheck, ChainView, VerifyResult } from "./audit_chain.ts";
export type { AuditEvent, AuditRow, AuditSink, AuditWriter } from "./audit_row.ts";
export type { AuditMirror, AuditStore, Checkpoint } from "./audit_store.ts";
export { bounded } from "./bounded.ts";
export { CaptureLeases } from "./capture_lease_store.ts";
export type { CaptureLease, CaptureLeaseStore } from "./capture_lease_store.ts";
export { databasePath, openDatabase } from "./database.ts";
export { QUESTION_MAX_CHARS, questionText } from "./decision_store.ts";
export type {
  Approval,
  ApprovalState,
  DecisionKind,
  DecisionRecord,
  DecisionStore,
  HumanOutcome,
  HumanQuestion,
  QuestionState,
  SettleResult,
} from "./decision_store.ts";
export type { DomainRule, DomainSnapshot, DomainStore } from "./domain_store.ts";
export { GRANT_MODES, USE_KINDS } from "./grant_store.ts";
export type {
  GrantChange,
  GrantListFilter,
  GrantMode,
  GrantPlan,
  GrantRecord,
  GrantStore,
  GrantUse,
  GrantWrite,
  UseKind,
} from "./grant_store.ts";
export { MemoryLiveSessions } from "./live_sessions.ts";
export type { LiveSessionStore } from "./live_sessions.ts";
export { MemoryDecisionStore } from "./memory_decision_store.ts";
export { PgAdminToken, rotateAdminToken } from "./pg_admin_token.ts";
export { PgAgentStore } from "./pg_agent_store.ts";
export { PgAuditLog } from "./pg_audit_log.ts";
export { PgAuditSink } from "./pg_audit_sink.ts";
export { PgCaptureLeaseRows } from "./pg_capture_leases.ts";
export { PgDatabase, PgError } from "./pg_database.ts";
export type { PgTx } from "./pg_database.ts";
export { PgDecisionStore } from "./pg_decision_store.ts";
export { PgDomainStore } from "./pg_domain_store.ts";
export { PgGrantStore } from "./pg_grant_store.ts";
export { PgLiveSessions } from "./pg_live_sessions.ts";
export { PgOperatorSessions } from "./pg_operator_sessions.ts";
export { addTenant, bindTenantLogin, listTenants, tenantLogins } from "./pg_tenants.ts";
export { PgVaultRecords } from "./pg_vault_records.ts";
export { SqliteAgentStore } from "./sqlite_agent_store.ts";
export { SqliteAuditLog } from "./sqlite_audit_log.ts";
export { sqliteAuditStore } from "./sqlite_audit_store.ts";
export { SqliteCaptureLeaseRows } from "./sqlite_capture_leases.ts";
export { SqliteDomainStore } from "./sqlite_domain_store.ts";
export { SqliteGrantStore } from "./sqlite_grant_store.ts";
export { DEFAULT_TENANT, TENANT_ID } from "./tenant.ts";
