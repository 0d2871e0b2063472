/**
 * One mint per target. A capture leases every secret id it will write before the vendor is
 * first contacted, and keeps the lease until it ends; a second capture into any of those
 * targets meanwhile is refused whole (`busy`) and contacts no vendor. Without it two captures
 * into the same empty targets both passed their checks and both registered an app: the vault
 * kept one, the vendor kept two, the loser's with credentials nobody holds.
 *
 * The rule, kept here for both stores:
 * - **all or none**: a lease is a row per target, all taken in one transaction, or none;
 *   a target held by another lease that has not expired makes the whole acquisition busy;
 * - **bounded**: a lease lasts {@link CAPTURE_LEASE_TTL_MS} from its last renewal, and its
 *   holder renews it every {@link CAPTURE_LEASE_RENEW_MS} while the capture runs, so a lease
 *   of a runtime that crashed (no renewal) expires within a minute and the next capture takes
 *   it over; a live capture loses its lease only when its renewals went unanswered for a
 *   whole TTL (three in a row);
 * - **lost is lost**: a lease whose renewal found fewer rows than it took, or that went a whole
 *   TTL without a renewal answered, is `lost()` (another capture may hold the targets now): the
 *   capture contacts the vendor no more;
 * - **released** on the capture's end, whatever it was, and on its session's end; a release
 *   that fails leaves rows that expire.
 *
 * Two adapters keep the rows: `SqliteCaptureLeaseRows` (`sqlite_capture_leases.ts`, the
 * embedded store) and `PgCaptureLeaseRows` (`pg_capture_leases.ts`, a tenant of the shared
 * store, so every runtime of it). One contract runs over both
 * (`capture_lease_store_contract_test.ts`).
 *
 * @module
 */
import { errorCode, log } from "../mod.ts";

/**
 * How long a lease lasts without a renewal: one minute. Long enough that a capture on a
 * loaded machine (a stalled event loop, a slow database) keeps its lease through three missed
 * renewals; short enough that a capture retried after its runtime crashed waits at most a
 * minute, which an operator notices before a vendor's one-hour code would run out.
 */
export const CAPTURE_LEASE_TTL_MS = 60_000;

/** How often a held lease is renewed: a quarter of its TTL. */
export const CAPTURE_LEASE_RENEW_MS = CAPTURE_LEASE_TTL_MS / 4;

/** The most targets one lease takes (a workflow has a handful of outputs). */
export const CAPTURE_LEASE_MAX_TARGETS = 16;

/** What `acquire` answers. */
export type CaptureLease =
  /** Every target is this capture's until `release()`. */
  | {
    kind: "held";
    /** The targets held, sorted, each once. */
    targets: readonly string[];
    /** Whether the lease may have passed to someone else (see the module's rule). */
    lost(): boolean;
    /** Lets every target go (once; later calls do nothing). Never rejects. */
    release(): Promise<void>;
  }
  /** Another lease holds `target` (and maybe more of them); nothing was taken. */
  | { kind: "busy"; target: string; by: string; until: string };

/** The port: one tenant's capture leases. */
export interface CaptureLeaseStore {
  /**
   * Leases every one of `targets` (secret ids) for `holder` (a session, as an operator reads
   * it), all or none. Rejects when the store cannot answer (nothing is held then).
   */
  acquire(targets: readonly string[], holder: string): Promise<CaptureLease>;
}

/** What an attempt to take the rows found. */
export type LeaseTake =
  | { taken: true }
  /** A row of another unexpired lease; `target` null when it was gone by the time it was read. */
  | { taken: false; target: string | null; by: string | null; until: string | null };

/** Where a store keeps its lease rows: one row per target, known by the lease's token. */
export interface CaptureLeaseRows {
  /**
   * In one transaction: a row per target for `token`, each new or taken over from a lease
   * expired; if any target is held by an unexpired lease, no row at all.
   */
  take(
    targets: readonly string[],
    token: string,
    holder: string,
    ttlMs: number,
  ): Promise<LeaseTake>;
  /** Moves the expiry of `token`'s unexpired rows to `ttlMs` from now; how many. */
  renew(token: string, ttlMs: number): Promise<number>;
  /** Removes `token`'s rows. */
  release(token: string): Promise<void>;
}

/** How a store's leases run (tests shorten the times). */
export interface CaptureLeaseOptions {
  /** The runtime's name: a lease's holder reads `session … on runtime-…`. */
  runtime: string;
  ttlMs?: number;
  renewMs?: number;
  now?: () => number;
}

/** The rule over a store's rows (see the module). */
export class CaptureLeases implements CaptureLeaseStore {
  readonly #rows: CaptureLeaseRows;
  readonly #runtime: string;
  readonly #ttlMs: number;
  readonly #renewMs: number;
  readonly #now: () => number;

  constructor(rows: CaptureLeaseRows, options: CaptureLeaseOptions) {
    this.#rows = rows;
    this.#runtime = options.runtime;
    this.#ttlMs = options.ttlMs ?? CAPTURE_LEASE_TTL_MS;
    this.#renewMs = options.renewMs ?? CAPTURE_LEASE_RENEW_MS;
    this.#now = options.now ?? Date.now;
  }

  async acquire(targets: readonly string[], holder: string): Promise<CaptureLease> {
    const wanted = [...new Set(targets)].sort();
    if (wanted.length === 0 || wanted.length > CAPTURE_LEASE_MAX_TARGETS) {
      throw new RangeError(`a lease takes 1 to ${CAPTURE_LEASE_MAX_TARGETS} targets`);
    }
    const token = crypto.randomUUID() + crypto.randomUUID();
    const by = `session ${holder} on ${this.#runtime}`.slice(0, 200);
    // From before the request: the rows expire no later than this, whenever they were written.
    const asked = this.#now();
    const took = await this.#rows.take(wanted, token, by, this.#ttlMs);
    if (!took.taken) {
      return {
        kind: "busy",
        target: took.target ?? wanted[0],
        by: took.by ?? "another capture",
        until: took.until ?? new Date(asked).toISOString(),
      };
    }
    return this.#held(wanted, token, asked + this.#ttlMs);
  }

  #held(targets: readonly string[], token: string, until: number): CaptureLease {
    let heldUntil = until;
    let gone = false;
    let renewing: Promise<void> | undefined;
    let released: Promise<void> | undefined;
    const timer = setInterval(() => {
      if (renewing || gone) return;
      const asked = this.#now();
      renewing = this.#rows.renew(token, this.#ttlMs).then(
        (n) => {
          if (n === targets.length) heldUntil = asked + this.#ttlMs;
          else gone = true;
        },
        // Unanswered: the lease stands until its last known expiry, then it is lost.
        (err) => log(`capture lease: a renewal failed (${errorCode(err) ?? "ERROR"})`),
      ).finally(() => renewing = undefined);
    }, this.#renewMs);
    return {
      kind: "held",
      targets,
      lost: () => gone || this.#now() >= heldUntil,
      release: () => {
        released ??= (async () => {
          clearInterval(timer);
          gone = true;
          // A renewal in flight lands first: none comes after the rows are gone.
          await renewing;
          try {
            await this.#rows.release(token);
          } catch (err) {
            // The rows expire on their own within the TTL.
            log(`capture lease: a release failed (${errorCode(err) ?? "ERROR"})`);
          }
        })();
        return released;
      },
    };
  }
}
