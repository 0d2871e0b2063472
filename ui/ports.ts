/**
 * What the console needs from the runtime, as interfaces: `cli/start.ts` hands in objects
 * that satisfy them structurally (`ApprovalBoard`, `QuestionBoard`), or the runtime's own
 * ports where the console reads what they keep (`AgentStore`, `DomainStore`, `Grants`: no
 * parallel set), and `ui/` imports nothing of the runtime but types. A method may answer at
 * once or with a promise. A port that refuses an input throws an error with a string `code`
 * (`BAD_ORIGIN`, `BAD_AGENT_NAME`, …): the console answers 400 with it (503 for a code ending
 * in `_UNAVAILABLE` or `_UNREADABLE`).
 *
 * @module
 */
import type {
  AgentInfo,
  AgentStore,
  AuditRow,
  DomainRule,
  DomainStore,
} from "../runtime/store/mod.ts";
import type { Grant, Grants } from "../runtime/grants/mod.ts";
import type { RequestView } from "../runtime/net/mod.ts";

/** A value now or later. */
export type MaybePromise<T> = T | Promise<T>;

/** One approval as the console shows it. */
export interface ApprovalView {
  readonly id: string;
  readonly agent: string | null;
  readonly session: string;
  readonly origin: string;
  readonly method: string;
  /** `form`: a form's own navigation submission; `script`: a fetch or XHR write. */
  readonly kind: string;
  /**
   * The exact held request: every text already redacted and escaped (no invisible, bidi or
   * control character left), every entry present, none cut.
   */
  readonly request: RequestView;
  readonly created_at: string;
  readonly expires_at: string;
  /** `pending`, `approved`, `denied`, `expired` or `withdrawn`. */
  readonly state: string;
  readonly decided_at?: string;
  readonly decided_by?: string;
}

/** A change the live view hears. */
export interface ApprovalChange {
  readonly type: string;
  readonly approval: ApprovalView;
}

/** The approvals (`ApprovalBoard`, over this runtime's memory or the shared store). */
export interface ApprovalsPort {
  /** Newest first; no state: pending ones, then finished ones. */
  list(state?: "pending" | "decided"): MaybePromise<readonly ApprovalView[]>;
  /** `by` names the door: `console` (cookie) or `api` (bearer). */
  decide(
    id: string,
    decision: "approve" | "deny",
    by: string,
  ): MaybePromise<"ok" | "not_pending" | "unknown">;
  subscribe(listener: (event: ApprovalChange) => void): () => void;
}

/** One `ask_human` question as the console shows it. */
export interface QuestionView {
  readonly id: string;
  readonly agent: string | null;
  readonly session: string | null;
  readonly question: string;
  readonly created_at: string;
  readonly expires_at: string;
  /** `pending`, `answered`, `expired` or `withdrawn`. */
  readonly state: string;
  readonly answer?: string;
  readonly answered_at?: string;
  readonly answered_by?: string;
}

/** A change the live view hears. */
export interface QuestionChange {
  readonly type: string;
  readonly question: QuestionView;
}

/** The operator questions (`QuestionBoard`, over this runtime's memory or the shared store). */
export interface QuestionsPort {
  list(state?: "pending" | "answered"): MaybePromise<readonly QuestionView[]>;
  answer(id: string, text: string, by: string): MaybePromise<"ok" | "not_pending" | "unknown">;
  subscribe(listener: (event: QuestionChange) => void): () => void;
}

/** One live agent session (one MCP connection and its browser). */
export interface SessionInfo {
  readonly id: string;
  readonly agent: string | null;
  /** The origin of its current page, if any. */
  readonly origin: string | null;
  readonly actionsUsed: number;
  readonly tainted: boolean;
  /** `netns`: its browser has a network of its own that reaches only the egress proxy. */
  readonly isolation: "netns" | "none";
  /**
   * The cgroup bounding its browser's memory, processes and CPU (`cgroup v2`, `cgroup v1`,
   * `none`); unknown for another runtime's session.
   */
  readonly cgroup?: string;
  /** ISO time. */
  readonly startedAt: string;
  /** On a shared store: the runtime holding it (absent: this one). */
  readonly runtime?: string;
  /** Its runtime stopped beating: the runtime, and so the session, is gone. */
  readonly gone?: boolean;
  /**
   * What the runtime is doing for it beyond a tool call (a credential capture's step); this
   * runtime's sessions only.
   */
  readonly activity?: string;
}

/** Whether the runtime's store answers (a shared database may not). */
export interface StoreStatus {
  /** False: every action and request is refused until the database answers again. */
  readonly storeAvailable: boolean;
}

/** How many sessions this runtime holds, and may hold at once. */
export interface Capacity {
  readonly open: number;
  /** The cap (`--max-sessions`); null: none (stdio, one session). */
  readonly max: number | null;
  /**
   * Sessions one agent may hold when its policy sets no `max_sessions` (its default share of
   * the cap); null: no share (no cap).
   */
  readonly agentShare: number | null;
}

/** The live sessions. */
export interface SessionsPort {
  list(): MaybePromise<readonly SessionInfo[]>;
  /** This runtime's use and cap; absent: not known. */
  capacity?(): Capacity;
  /** Ends the session and its browser; false when there is no such session. */
  kill(id: string): Promise<boolean>;
}

/** One agent (never its key): the runtime's record. */
export type AgentView = AgentInfo;

/**
 * The agent keys: the runtime's `AgentStore` (`runtime/store/agent_store.ts`), its `remove`
 * also closing the agent's connections. `add` gives the key once; it is never shown again.
 */
export type AgentsPort = Pick<AgentStore, "list" | "add" | "remove">;

/** One dynamic domain rule: the runtime's record. */
export type DomainView = DomainRule;

/** The dynamic domain rules: the runtime's `DomainStore` (`runtime/store/domain_store.ts`). */
export type DomainsPort = Pick<DomainStore, "list" | "add" | "remove">;

/** One grant as the console shows it (a grant holds no secret value, only its id). */
export type GrantView = Grant;

/**
 * The grants: the runtime's `Grants` (`runtime/grants/grants.ts`, over either store). A
 * refusal rejects with its code (`GRANT_NOT_FOUND`, `GRANT_NOT_PENDING`, …), which the routes
 * answer (`grantOutcome()` of `api_routes.ts`).
 */
export type GrantsPort = Pick<Grants, "list" | "add" | "approve" | "revoke">;

/** Which audit rows to list. */
export interface AuditFilter {
  /** At most this many (1–1000). */
  readonly limit: number;
  /** Only rows with `seq` below this (paging back). */
  readonly before?: number;
  readonly session?: string;
  /** `allow`, `deny`, `confirm` or `event`. */
  readonly decision?: string;
}

/** What a chain verification found. */
export interface AuditCheck {
  readonly ok: boolean;
  readonly rows: number;
  /** The first problem, when not ok. */
  readonly error?: string;
}

/** The audit log, read-only. */
export interface AuditPort {
  /** Rows newest first. */
  rows(filter: AuditFilter): MaybePromise<readonly AuditRow[]>;
  verify(): MaybePromise<AuditCheck>;
  /** Every row oldest first (chain order), for the JSONL export; read lazily. */
  export(): Iterable<AuditRow> | AsyncIterable<AuditRow>;
}

/** One loaded policy module. */
export interface PolicyModuleView {
  readonly name: string;
  /** `policy` or `classifier`, as the runtime loaded it. */
  readonly kind: string;
  readonly sha256: string;
  /** Key id of the key that signed it. */
  readonly signer: string;
}

/** The loaded policy modules. */
export interface PoliciesPort {
  modules(): MaybePromise<readonly PolicyModuleView[]>;
}
