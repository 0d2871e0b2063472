/**
 * Walking an audit chain: every row's hash recomputed (`rowHash`), every link and number
 * checked from the anchor (genesis, or where the last prune cut) to the recorded head. An
 * edited row fails its own hash, an inserted or removed row breaks the sequence or the link,
 * and a removed tail disagrees with the head. What a chain is held against beyond itself
 * (signed checkpoints) is a `ChainCheck` handed in from above: the store walks, it does not
 * judge signatures.
 *
 * @module
 */
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

/** What a chain holds where a check looks: a row's hash, and the chain's extent. */
export interface ChainView {
  /** The first row kept (after a prune) and the hash it chains from. */
  anchor: { seq: number; prevHash: string };
  head: { seq: number; hash: string };
  /** The hash of row `seq`, if the chain still holds it. */
  hashAt(seq: number): string | undefined;
  /**
   * How long rows must be kept (a PostgreSQL tenant's retention): a signed row below the
   * anchor that is younger was removed by something other than a prune. None: any age.
   */
  retentionMs?: number;
}

/**
 * A check a chain is held against besides its own hashes (signed checkpoints:
 * `checkpointCheck()` of runtime/audit/): the problems it finds in tenant `tenant`'s chain.
 */
export interface ChainCheck {
  problems(chain: ChainView, tenant: string): string[];
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

/**
 * Adds what `check` finds against `chain` to `result`. Several checks are one per signer
 * (each runtime of a tenant signs with its own key): the chain must agree with every one.
 */
export function checkedResult(
  result: VerifyResult,
  chain: ChainView,
  tenant: string,
  check?: ChainCheck | readonly ChainCheck[],
): VerifyResult {
  const checks: readonly ChainCheck[] = check === undefined
    ? []
    : Array.isArray(check)
    ? check
    : [check as ChainCheck];
  const problems = checks.flatMap((c) => c.problems(chain, tenant));
  if (problems.length === 0) return result;
  return { ...result, ok: false, problems: [...result.problems, ...problems] };
}
