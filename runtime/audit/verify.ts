/**
 * Checking and pruning the audit chain. Verification walks the rows in order from the
 * anchor (genesis, or where the last prune cut), recomputing every hash: an edited row
 * fails its own hash, an inserted or removed row breaks the sequence or the link, and a
 * removed tail disagrees with the head the insert trigger keeps.
 *
 * @module
 */
import type { DatabaseSync } from "node:sqlite";
import { OmotaiError } from "../mod.ts";
import { type AuditRow, rowHash } from "./audit_row.ts";

/** What a verification found. */
export interface VerifyResult {
  ok: boolean;
  rows: number;
  firstSeq: number | null;
  lastSeq: number | null;
  /** Human-readable problems, first one first; empty when `ok`. */
  problems: string[];
}

interface AuditState {
  head_seq: number;
  head_hash: string;
  anchor_seq: number;
  anchor_hash: string;
}

/** Checks a sequence of rows against an expected start (and, if given, head). */
export function verifyRows(
  rows: Iterable<AuditRow>,
  start?: { seq: number; prevHash: string },
  head?: { seq: number; hash: string },
): VerifyResult {
  const problems: string[] = [];
  let count = 0;
  let first: number | null = null;
  let prev: AuditRow | undefined;
  for (const row of rows) {
    count++;
    if (first === null) {
      first = row.seq;
      if (start && (row.seq !== start.seq || row.prev_hash !== start.prevHash)) {
        problems.push(
          `row ${row.seq}: the chain should start at row ${start.seq} from the recorded anchor`,
        );
      }
    } else if (prev) {
      if (row.seq !== prev.seq + 1) {
        problems.push(`row ${row.seq}: follows row ${prev.seq} (rows missing or inserted)`);
      }
      if (row.prev_hash !== prev.hash) {
        problems.push(`row ${row.seq}: does not link to row ${prev.seq}`);
      }
    }
    const { hash: _hash, ...rest } = row;
    if (!Number.isSafeInteger(row.seq)) {
      // Past 2^53 its number is not its text: nothing the runtime wrote, nothing to hash.
      problems.push(`row ${row.seq}: its seq is past what a chain can number exactly`);
    } else if (rowHash(rest) !== row.hash) {
      problems.push(`row ${row.seq}: contents do not match its hash`);
    }
    prev = row;
  }
  if (head) {
    const lastSeq = prev?.seq ?? (start ? start.seq - 1 : 0);
    const lastHash = prev?.hash ?? start?.prevHash;
    if (head.seq !== lastSeq || head.hash !== lastHash) {
      problems.push(`head: the log recorded row ${head.seq} as its last, found ${lastSeq}`);
    }
  }
  return {
    ok: problems.length === 0,
    rows: count,
    firstSeq: first,
    lastSeq: prev?.seq ?? null,
    problems,
  };
}

/** Verifies the audit table of `db`. */
export function verifyAudit(db: DatabaseSync): VerifyResult {
  const state = db.prepare("SELECT * FROM audit_state WHERE id = 1").get() as unknown as AuditState;
  const rows = db.prepare("SELECT * FROM audit ORDER BY seq").iterate() as Iterable<AuditRow>;
  return verifyRows(
    rows,
    { seq: state.anchor_seq, prevHash: state.anchor_hash },
    { seq: state.head_seq, hash: state.head_hash },
  );
}

/** Verifies JSONL mirror files (oldest first) as one chain. */
export function verifyJsonl(files: string[]): VerifyResult {
  const rows: AuditRow[] = [];
  for (const file of files) {
    const text = Deno.readTextFileSync(file);
    let n = 0;
    for (const line of text.split("\n")) {
      n++;
      if (!line.trim()) continue;
      try {
        rows.push(JSON.parse(line) as AuditRow);
      } catch {
        return {
          ok: false,
          rows: rows.length,
          firstSeq: rows[0]?.seq ?? null,
          lastSeq: rows.at(-1)?.seq ?? null,
          problems: [`${file}:${n}: not a JSON row`],
        };
      }
    }
  }
  return verifyRows(rows);
}

/** Parses `90d`, `12h`, `30m`, `45s` into milliseconds. */
export function parseAge(text: string): number {
  const m = /^(\d+)([dhms])$/.exec(text.trim());
  if (!m) {
    throw new OmotaiError("BAD_OPTION", `--older-than takes e.g. 90d, 12h, 30m, not "${text}"`);
  }
  const unit = { d: 86_400_000, h: 3_600_000, m: 60_000, s: 1_000 }[m[2] as "d" | "h" | "m" | "s"];
  return Number(m[1]) * unit;
}

/**
 * Removes the rows older than `cutoff` from the start of the chain and records the new
 * anchor, so the remaining rows still verify. Only a prefix is ever removed.
 */
export function pruneAudit(db: DatabaseSync, cutoff: Date): { removed: number; anchorSeq: number } {
  db.exec("BEGIN IMMEDIATE");
  try {
    const state = db.prepare("SELECT * FROM audit_state WHERE id = 1")
      .get() as unknown as AuditState;
    const keep = db.prepare("SELECT seq, prev_hash FROM audit WHERE ts >= ? ORDER BY seq LIMIT 1")
      .get(cutoff.toISOString()) as { seq: number; prev_hash: string } | undefined;
    const anchorSeq = keep?.seq ?? state.head_seq + 1;
    const anchorHash = keep?.prev_hash ?? state.head_hash;
    db.exec("UPDATE audit_state SET pruning = 1 WHERE id = 1");
    const result = db.prepare("DELETE FROM audit WHERE seq < ?").run(anchorSeq);
    db.prepare("UPDATE audit_state SET pruning = 0, anchor_seq = ?, anchor_hash = ? WHERE id = 1")
      .run(anchorSeq, anchorHash);
    db.exec("COMMIT");
    return { removed: Number(result.changes), anchorSeq };
  } catch (err) {
    db.exec("ROLLBACK");
    throw err;
  }
}
