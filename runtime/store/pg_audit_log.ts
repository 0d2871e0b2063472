/**
 * One tenant's audit chain in PostgreSQL (`audit_events`, under row-level security). Rows
 * are built exactly as the embedded log builds them (`auditFields`, redacted before they are
 * hashed) and hash to what it would hash them to (`rowHash`). Appends for one tenant are
 * serialized across every runtime on the tenant's head row (`audit_lock_head()`, `FOR
 * UPDATE`; an advisory lock would be open to any role, so another tenant's runtime could hold
 * it), and the database itself refuses a row that does not continue the tenant's head
 * (`audit_link`). A tenant's chain starts from a genesis bound to its id (`audit_genesis`),
 * so rows moved between tenants do not link.
 *
 * An append is one statement (`audit_append`, one round trip, one commit): the runtime sends
 * each row's fields, redacted, with its hash's tail (`rowTail`); the database, holding the
 * tenant's head, gives each row its place and hashes it as `rowHash` does, and the runtime
 * checks every hash it is answered.
 *
 * @module
 */
import { createHash } from "node:crypto";
import { log, OmotaiError } from "../mod.ts";
import {
  type AuditEvent,
  type AuditFields,
  auditFields,
  type AuditRow,
  placedRow,
  rowTail,
} from "./audit_row.ts";
import { type ChainCheck, checkedResult, type VerifyResult, verifyRows } from "./audit_chain.ts";
import {
  type AuditMirror,
  type AuditRedactor,
  type AuditStore,
  type AuditWriterOptions,
  type Checkpoint,
  type RecentFilter,
  requiredRedactor,
} from "./audit_store.ts";
import { type PgDatabase, PgError, type PgTx } from "./pg_database.ts";

/** Where tenant `tenant`'s chain starts (the database's `audit_genesis`). */
export function tenantGenesis(tenant: string): string {
  return createHash("sha256").update(`omotai-audit-genesis\n${tenant}`).digest("hex");
}

interface Head {
  head_seq: string;
  head_hash: string;
  anchor_seq: string;
  anchor_hash: string;
}

/** What a PostgreSQL audit log writes with (its redactor required, as every writer's). */
export interface PgAuditOptions extends AuditWriterOptions {
  /** The rows' time (tests date rows back to prune them). */
  now?: () => Date;
}

/** Tenant `tenant`'s chain in `db`. */
export class PgAuditLog implements AuditStore {
  readonly tenant: string;
  readonly #db: PgDatabase;
  readonly #mirror: AuditMirror | undefined;
  readonly #redactor: AuditRedactor;
  readonly #now: () => Date;

  constructor(db: PgDatabase, tenant: string, options: PgAuditOptions) {
    this.#db = db;
    this.tenant = tenant;
    this.#mirror = options.mirror;
    this.#redactor = requiredRedactor(options);
    this.#now = options.now ?? (() => new Date());
  }

  async append(events: AuditEvent[]): Promise<AuditRow[]> {
    if (events.length === 0) return [];
    const ts = this.#now().toISOString();
    const redact = (v: string) => this.#redactor.redact(v);
    const fields = events.map((event) => auditFields(event, ts, redact));
    let rows: AuditRow[];
    try {
      // One statement, committed on its own: the database takes the tenant's head, gives each
      // row its place and hashes it from the tail sent with it; other runtimes of the tenant
      // take turns on the same head and never make this one write again.
      const placed = await this.#db.statement((sql) =>
        sql<{ seq: string; prev_hash: string; hash: string }[]>`
          SELECT seq, prev_hash, hash
          FROM audit_append(${this.tenant}, ${sql.json(fields.map(record))})`
      );
      rows = checkedPlaces(fields, placed);
    } catch (err) {
      throw new OmotaiError(
        // Refused for what the rows hold (a row the database cannot take): the store works,
        // and a writer can keep the other rows it batched with them.
        err instanceof PgError && err.refused ? "AUDIT_ROW_REFUSED" : "AUDIT_UNAVAILABLE",
        this.#redactor.redact(
          `audit row not written: ${err instanceof OmotaiError ? err.message : "error"}`,
        ),
      );
    }
    for (const row of rows) this.#mirror?.write(row);
    return rows;
  }

  async rows(afterSeq = 0, limit = 10_000): Promise<AuditRow[]> {
    return await this.#db.tenant(this.tenant, async (tx) => {
      const found = await tx<Record<string, unknown>[]>`
        SELECT seq, ts, session, agent, kind, source, origin, method, decision, reason,
          module, rule, prev_hash, hash
        FROM audit_events WHERE tenant_id = ${this.tenant} AND seq > ${afterSeq}
        ORDER BY seq LIMIT ${limit}`;
      return found.map(toRow);
    });
  }

  async recent(f: RecentFilter): Promise<AuditRow[]> {
    return await this.#db.tenant(this.tenant, async (tx) => {
      // Each filter a fragment of its own, or none: every value stays a bound parameter.
      const found = await tx<Record<string, unknown>[]>`
        SELECT seq, ts, session, agent, kind, source, origin, method, decision, reason,
          module, rule, prev_hash, hash
        FROM audit_events WHERE tenant_id = ${this.tenant}
          ${f.before != null ? tx`AND seq < ${f.before}` : tx``}
          ${f.session != null ? tx`AND session = ${f.session}` : tx``}
          ${f.decision != null ? tx`AND decision = ${f.decision}` : tx``}
        ORDER BY seq DESC LIMIT ${f.limit}`;
      return found.map(toRow);
    });
  }

  async verify(check?: ChainCheck | readonly ChainCheck[]): Promise<VerifyResult> {
    return await this.#db.tenant(this.tenant, async (tx) => {
      const head = await readHead(tx, this.tenant);
      if (!head) {
        return {
          ok: false,
          rows: 0,
          firstSeq: null,
          lastSeq: null,
          problems: [`no tenant ${this.tenant}`],
        };
      }
      const found = await tx<Record<string, unknown>[]>`
        SELECT seq, ts, session, agent, kind, source, origin, method, decision, reason,
          module, rule, prev_hash, hash
        FROM audit_events WHERE tenant_id = ${this.tenant} ORDER BY seq`;
      const rows = found.map(toRow);
      const anchor = { seq: Number(head.anchor_seq), prevHash: head.anchor_hash };
      const last = { seq: Number(head.head_seq), hash: head.head_hash };
      const bySeq = new Map(rows.map((r) => [r.seq, r.hash]));
      const [keep] = await tx<{ days: number }[]>`
        SELECT days FROM audit_retention WHERE tenant_id = ${this.tenant}`;
      const result = checkedResult(
        verifyRows(rows, anchor, last),
        {
          anchor,
          head: last,
          hashAt: (seq) => bySeq.get(seq),
          // What a prune may remove: nothing younger than the tenant's retention.
          retentionMs: (keep?.days ?? 90) * 86_400_000,
        },
        this.tenant,
        check,
      );
      // A chain whose anchor is not where it started must have been pruned by the function
      // that records it; one that starts at 1 must start from this tenant's genesis.
      if (Number(head.anchor_seq) === 1 && head.anchor_hash !== tenantGenesis(this.tenant)) {
        result.problems.unshift("anchor: the chain does not start from this tenant's genesis");
        result.ok = false;
      }
      return result;
    });
  }

  async head(): Promise<{ seq: number; hash: string }> {
    return await this.#db.tenant(this.tenant, async (tx) => {
      const head = await readHead(tx, this.tenant);
      if (!head) throw new OmotaiError("AUDIT_UNAVAILABLE", `no tenant ${this.tenant}`);
      return { seq: Number(head.head_seq), hash: head.head_hash };
    });
  }

  async addCheckpoint(c: Checkpoint): Promise<void> {
    await this.#db.tenant(
      this.tenant,
      (tx) =>
        tx`INSERT INTO audit_checkpoints (tenant_id, seq, hash, ts, runtime, key_id, sig)
        VALUES (${this.tenant}, ${c.seq}, ${c.hash}, ${c.ts}, ${c.runtime}, ${c.key_id}, ${c.sig})`,
    );
  }

  async checkpoints(): Promise<Checkpoint[]> {
    return await this.#db.tenant(this.tenant, async (tx) => {
      const rows = await tx<Record<string, string>[]>`
        SELECT seq, hash, ts, runtime, key_id, sig FROM audit_checkpoints
        WHERE tenant_id = ${this.tenant} ORDER BY ts, seq`;
      return rows.map((r) => ({
        v: 1 as const,
        tenant: this.tenant,
        seq: Number(r.seq),
        hash: r.hash,
        ts: r.ts,
        runtime: r.runtime,
        key_id: r.key_id,
        sig: r.sig,
      }));
    });
  }

  async prune(cutoff: Date): Promise<{ removed: number; anchorSeq: number }> {
    return await this.#db.tenant(this.tenant, async (tx) => {
      const [r] = await tx<{ removed: string; anchor_seq: string }[]>`
        SELECT removed, anchor_seq FROM audit_prune(${cutoff})`;
      return { removed: Number(r.removed), anchorSeq: Number(r.anchor_seq) };
    });
  }
}

/** The tenant's head (row-level security would hide any other; the filter says so too). */
async function readHead(tx: PgTx, tenant: string): Promise<Head | undefined> {
  const [head] = await tx<Head[]>`
    SELECT head_seq, head_hash, anchor_seq, anchor_hash FROM audit_heads
    WHERE tenant_id = ${tenant}`;
  return head;
}

/** A row's fields as `audit_append` takes them: the columns, and its hash's tail. */
function record(fields: AuditFields): AuditFields & { tail: string } {
  return { ...fields, tail: rowTail(fields) };
}

/**
 * `fields` at the places the database answered, each hash recomputed here: a database that
 * placed or hashed a row otherwise than `rowHash()` would (another encoding, a changed
 * function) is caught at the append that did it, not at the next verify.
 */
function checkedPlaces(
  fields: AuditFields[],
  placed: { seq: string; prev_hash: string; hash: string }[],
): AuditRow[] {
  if (placed.length !== fields.length) {
    throw new OmotaiError(
      "AUDIT_UNAVAILABLE",
      "the database placed another number of rows than it was given (AUDIT_ROWS_MISSING)",
    );
  }
  return fields.map((f, i) => {
    const row = placedRow(f, Number(placed[i].seq), placed[i].prev_hash);
    const linked = i === 0 || row.prev_hash === placed[i - 1].hash;
    if (row.hash !== placed[i].hash || !linked) {
      // Kept by the database all the same: verify will flag the row; the action is denied.
      log(`audit: seq ${row.seq} hashed otherwise by the database (AUDIT_HASH_MISMATCH)`);
      throw new OmotaiError(
        "AUDIT_UNAVAILABLE",
        "the database hashed a row otherwise than the runtime does (AUDIT_HASH_MISMATCH)",
      );
    }
    return row;
  });
}

function toRow(r: Record<string, unknown>): AuditRow {
  return { ...r, seq: Number(r.seq) } as unknown as AuditRow;
}
