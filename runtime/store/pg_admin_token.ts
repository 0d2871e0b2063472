/**
 * A tenant's admin token in PostgreSQL: the owner sets it (`omotai tenant add`, `omotai
 * tenant token`: a fresh token printed once, its SHA-256 kept), and every runtime of the
 * tenant checks the console's and the API's bearer against the hash it reads under the
 * tenant's row-level security. A token therefore opens exactly one tenant, and a rotation
 * reaches every runtime within one refresh.
 *
 * @module
 */
import { Buffer } from "node:buffer";
import { createHash, timingSafeEqual } from "node:crypto";
import { log, OmotaiError } from "../mod.ts";
import type { PgDatabase } from "./pg_database.ts";

/** How often a runtime reads its tenant's token hash again (a rotation's delay). */
export const ADMIN_REFRESH_MS = 5_000;

/** How long a hash may go unread before every bearer is refused (fail closed). */
export const ADMIN_STALE_MS = 30_000;

function hashOf(token: string): string {
  return createHash("sha256").update(token).digest("hex");
}

/**
 * Sets a fresh admin token for tenant `tenant` (the owner's pool) and returns it: the only
 * time it exists outside the operator's hands.
 */
export async function rotateAdminToken(owner: PgDatabase, tenant: string): Promise<string> {
  const token = Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("base64url");
  const hash = hashOf(token);
  const found = await owner.tenant(tenant, async (tx) => {
    const known = await tx`SELECT 1 FROM tenants WHERE id = ${tenant}`;
    if (known.length === 0) return false;
    await tx`INSERT INTO tenant_admins (tenant_id, token_hash) VALUES (${tenant}, ${hash})
      ON CONFLICT (tenant_id) DO UPDATE SET token_hash = excluded.token_hash, set_at = now()`;
    return true;
  });
  if (!found) throw new OmotaiError("TENANT_UNKNOWN", `no tenant ${tenant} in the database`);
  return token;
}

/** A runtime's check of bearers against its tenant's admin token. */
export class PgAdminToken implements AsyncDisposable {
  readonly #db: PgDatabase;
  readonly #tenant: string;
  readonly #now: () => number;
  readonly #staleMs: number;
  #hash: Buffer | undefined;
  #readAt = -Infinity;
  #timer: ReturnType<typeof setInterval> | undefined;
  #reading: Promise<void> | undefined;

  private constructor(db: PgDatabase, tenant: string, now: () => number, staleMs: number) {
    this.#db = db;
    this.#tenant = tenant;
    this.#now = now;
    this.#staleMs = staleMs;
  }

  /**
   * Reads the tenant's hash and keeps it fresh; throws `ADMIN_TOKEN_UNSET` when the tenant
   * has none (the owner sets one with `omotai tenant token`). `staleMs` (default
   * `ADMIN_STALE_MS`) is for tests that wait out an outage.
   */
  static async open(
    db: PgDatabase,
    tenant: string,
    options: { refreshMs?: number; now?: () => number; staleMs?: number } = {},
  ): Promise<PgAdminToken> {
    const check = new PgAdminToken(
      db,
      tenant,
      options.now ?? Date.now,
      options.staleMs ?? ADMIN_STALE_MS,
    );
    await check.refresh();
    if (!check.#hash) {
      throw new OmotaiError(
        "ADMIN_TOKEN_UNSET",
        `tenant ${tenant} has no admin token: omotai tenant token ${tenant} (as the owner)`,
      );
    }
    check.#timer = setInterval(
      () => void check.refresh().catch(() => {}),
      options.refreshMs ?? ADMIN_REFRESH_MS,
    );
    Deno.unrefTimer(check.#timer);
    return check;
  }

  /** Reads the hash again (one read at a time). */
  refresh(): Promise<void> {
    this.#reading ??= (async () => {
      try {
        const [row] = await this.#db.tenant(
          this.#tenant,
          (tx) =>
            tx<{ token_hash: string }[]>`SELECT token_hash FROM tenant_admins
            WHERE tenant_id = ${this.#tenant}`,
        );
        this.#hash = row ? Buffer.from(row.token_hash, "hex") : undefined;
        this.#readAt = this.#now();
      } catch (err) {
        log(`admin token: ${(err as { code?: string }).code ?? "ERROR"}`);
        throw err;
      } finally {
        this.#reading = undefined;
      }
    })();
    return this.#reading;
  }

  /**
   * True when `presented` is the tenant's admin token, false for anything else. Once the hash
   * could not be read for `ADMIN_STALE_MS` (or the `staleMs` it was opened with), throws `ADMIN_TOKEN_UNAVAILABLE` for every bearer
   * (fail closed): the console answers 503, and counts no failed guess against an operator
   * whose token may well be right.
   */
  verify(presented: string): boolean {
    if (this.#now() - this.#readAt > this.#staleMs) {
      throw new OmotaiError(
        "ADMIN_TOKEN_UNAVAILABLE",
        "the tenant's admin token cannot be read from the database now",
      );
    }
    if (!this.#hash) return false;
    return timingSafeEqual(Buffer.from(hashOf(presented), "hex"), this.#hash);
  }

  [Symbol.asyncDispose](): Promise<void> {
    clearInterval(this.#timer);
    return this.#reading?.catch(() => {}) ?? Promise.resolve();
  }
}
