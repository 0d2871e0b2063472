/**
 * What `createConsoleApp()` is built from: the admin token, the addresses it answers to,
 * and the runtime's ports.
 *
 * @module
 */
import type {
  AgentsPort,
  ApprovalsPort,
  AuditPort,
  DomainsPort,
  GrantsPort,
  PoliciesPort,
  QuestionsPort,
  SessionsPort,
  StoreStatus,
} from "./ports.ts";
import type { AdminCredential } from "./secrets.ts";
import type { OperatorSessionStore } from "./operator_sessions.ts";

/** The console's dependencies. */
export interface ConsoleDeps {
  /** The operator's credential (login form, `Authorization: Bearer` on `/api/*`). */
  adminToken: AdminCredential;
  /**
   * Host header values the console answers to (`host:port`, as `allowedHostsFor()` of
   * `runtime/mcp/host_guard.ts` gives them); anything else is refused (DNS rebinding).
   */
  allowedHosts: readonly string[];
  approvals: ApprovalsPort;
  questions: QuestionsPort;
  sessions: SessionsPort;
  agents: AgentsPort;
  domains: DomainsPort;
  grants: GrantsPort;
  audit: AuditPort;
  policies: PoliciesPort;
  /**
   * Logged-in console sessions; default: in this process's memory. A shared store's keeps
   * an operator logged in on every runtime of the tenant.
   */
  operatorSessions?: OperatorSessionStore;
  /** Whether the store answers now; absent: always (the embedded store). */
  status?(): StoreStatus;
  /** Heartbeat of `/api/events`; default 15 s. */
  heartbeatMs?: number;
  /** Largest request body; default 64 KiB. */
  maxBodyBytes?: number;
  /** The clock of sessions and the login limiter (tests); default `Date.now`. */
  now?: () => number;
  /** Where unexpected errors are reported (by name only); default stderr. */
  log?: (line: string) => void;
}
