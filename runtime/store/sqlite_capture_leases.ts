/**
 * The embedded store's capture leases: a row per target in the data dir's SQLite file
 * (`capture_leases`), so a lease outlives a runtime that crashed only until it expires. Each
 * call is one `BEGIN IMMEDIATE` transaction, so two processes on one file take turns, and the
 * clock is this process's. The rule they serve is `capture_lease_store.ts`'s.
 *
 * @module
 */
import type { DatabaseSync } from "node:sqlite";
import { OmotaiError } from "../mod.ts";
import type { CaptureLeaseRows, LeaseTake } from "./capture_lease_store.ts";

interface Row {
  target: string;
  holder: string;
  expires_at: number;
}

/** Lease rows in a SQLite database migrated by `openDatabase`. */
export class SqliteCaptureLeaseRows implements CaptureLeaseRows {
  readonly #db: DatabaseSync;
  readonly #now: () => number;

  constructor(db: DatabaseSync, now: () => number = Date.now) {
    this.#db = db;
    this.#now = now;
  }

  take(
    targets: readonly string[],
    token: string,
    holder: string,
    ttlMs: number,
  ): Promise<LeaseTake> {
    return this.#tx((): LeaseTake => {
      const now = this.#now();
      const read = this.#db.prepare(
        "SELECT target, holder, expires_at FROM capture_leases WHERE target = ? AND expires_at > ?",
      );
      for (const target of targets) {
        const row = read.get(target, now) as Row | undefined;
        if (row) {
          return {
            taken: false,
            target: row.target,
            by: row.holder,
            until: new Date(row.expires_at).toISOString(),
          };
        }
      }
      // Every row is new or an expired lease's, taken over in place.
      const write = this.#db.prepare(
        `INSERT INTO capture_leases (target, token, holder, expires_at) VALUES (?, ?, ?, ?)
          ON CONFLICT (target) DO UPDATE SET token = excluded.token, holder = excluded.holder,
            expires_at = excluded.expires_at`,
      );
      for (const target of targets) write.run(target, token, holder, now + ttlMs);
      return { taken: true };
    });
  }

  renew(token: string, ttlMs: number): Promise<number> {
    return this.#tx(() => {
      const now = this.#now();
      return Number(
        this.#db.prepare(
          "UPDATE capture_leases SET expires_at = ? WHERE token = ? AND expires_at > ?",
        ).run(now + ttlMs, token, now).changes,
      );
    });
  }

  async release(token: string): Promise<void> {
    await this.#tx(() => {
      this.#db.prepare("DELETE FROM capture_leases WHERE token = ?").run(token);
    });
  }

  /** `fn` in one immediate transaction, rolled back when it throws; as a promise. */
  #tx<T>(fn: () => T): Promise<T> {
    try {
      this.#db.exec("BEGIN IMMEDIATE");
    } catch (err) {
      return Promise.reject(unavailable(err));
    }
    try {
      const out = fn();
      this.#db.exec("COMMIT");
      return Promise.resolve(out);
    } catch (err) {
      try {
        this.#db.exec("ROLLBACK");
      } catch { /* no transaction left to end */ }
      return Promise.reject(unavailable(err));
    }
  }
}

function unavailable(err: unknown): OmotaiError {
  return err instanceof OmotaiError
    ? err
    : new OmotaiError("DB_UNAVAILABLE", "the capture leases could not be read or written");
}
