import assert from "node:assert/strict";
import { join } from "node:path";
import type { DatabaseSync } from "node:sqlite";
import { rawKeySource, Vault } from "../../vault/mod.ts";
import { SqliteAuditLog } from "../store/sqlite_audit_log.ts";
import { verifyAudit } from "../store/sqlite_audit_store.ts";
import { openDatabase } from "../store/database.ts";
import { GrantError } from "./errors.ts";
import type { Grant } from "./grant.ts";
import type { GrantAuditEvent, GrantAuditSink } from "./grant_audit.ts";
import { Grants } from "./grants.ts";
import { SqliteGrantStore } from "../store/sqlite_grant_store.ts";
import type { RedeemRequest } from "./redeem_checks.ts";
import { processRedactor } from "../redact/mod.ts";

const NOW = Date.parse("2026-06-01T12:00:00.000Z");
const SHOP = "http://127.0.0.1:8081";
const VALUE = `pw-${crypto.randomUUID()}`;
const code = (c: string) => (err: unknown) => err instanceof GrantError && err.code === c;

class MemorySink implements GrantAuditSink {
  rows: GrantAuditEvent[] = [];
  failing = false;
  append(event: GrantAuditEvent): void {
    if (this.failing) throw new Error("disk full");
    this.rows.push(event);
  }
}

interface World extends AsyncDisposable {
  db: DatabaseSync;
  vault: Vault;
  sink: MemorySink;
  store: Grants;
  advance(ms: number): void;
  /** A grant of shop.password for ci-bot (fill on SHOP), approved unless told otherwise. */
  grant(overrides?: Record<string, unknown>, approve?: boolean): Promise<Grant>;
  redeem(overrides?: Partial<RedeemRequest>): Promise<Grant[]>;
}

/** A real database file (migrated), a vault holding two secrets, a store on a fake clock. */
async function world(): Promise<World> {
  const dir = await Deno.makeTempDir({ prefix: "omotai-grants-" });
  const db = openDatabase(join(dir, "omotai.db"));
  const key = btoa(String.fromCharCode(...crypto.getRandomValues(new Uint8Array(32))));
  const vault = await Vault.open(db, rawKeySource(key));
  await vault.add("shop.password", "password", VALUE);
  await vault.add("shop.user", "username", "alice");
  let clock = NOW;
  const sink = new MemorySink();
  const store = new Grants(new SqliteGrantStore(db), {
    audit: sink,
    secrets: vault,
    now: () => clock,
  });
  return {
    db,
    vault,
    sink,
    store,
    advance: (ms) => clock += ms,
    grant: (overrides = {}, approve = true) =>
      store.add({
        secret_id: "shop.password",
        agent: "ci-bot",
        purpose: "log in to the shop",
        mode: "standing",
        uses: [{ kind: "fill", allowed_origins: [SHOP] }],
        ...overrides,
      }, { approve, by: "cli" }),
    redeem: (overrides = {}) =>
      store.redeem({
        agent: "ci-bot",
        useKind: "fill",
        origin: SHOP,
        sessionId: "s-1",
        ...overrides,
      }),
    async [Symbol.asyncDispose]() {
      vault[Symbol.dispose]();
      db.close();
      await Deno.remove(dir, { recursive: true });
    },
  };
}

Deno.test("Grants.add() starts pending and audits grant_add with the door, no values", async () => {
  await using w = await world();
  const g = await w.grant({ mode: "once", expires: "2h" }, false);
  assert.match(g.id, /^g_[a-z2-7]{16}$/);
  assert.equal(g.state, "pending");
  assert.equal(g.approved_at, null);
  assert.equal(g.created_by, "cli");
  assert.equal(g.expires_at, "2026-06-01T14:00:00.000Z");
  assert.deepEqual(g.uses, [{ kind: "fill", allowed_origins: [SHOP] }]);
  assert.deepEqual(await w.store.get(g.id), g);
  assert.deepEqual(w.sink.rows, [{
    session: null,
    agent: "ci-bot",
    kind: "grant_add",
    source: "operator",
    origin: null,
    method: null,
    decision: "event",
    reason: "GRANT_ADDED",
    module: "cli",
    rule: g.id,
  }]);
  await assert.rejects(w.redeem({ grantIds: [g.id] }), code("GRANT_PENDING"));
});

Deno.test("Grants.add() with approve is active at once and writes add and approve rows", async () => {
  await using w = await world();
  const g = await w.grant({}, true);
  assert.equal(g.state, "active");
  assert.equal(g.approved_by, "cli");
  assert.deepEqual(w.sink.rows.map((r) => [r.kind, r.decision, r.reason]), [
    ["grant_add", "event", "GRANT_ADDED"],
    ["grant_approve", "allow", "GRANT_APPROVED"],
  ]);
  assert.equal((await w.redeem({ grantIds: [g.id] }))[0].id, g.id);
});

Deno.test("Grants.add() refuses a secret the vault does not hold and bad input", async () => {
  await using w = await world();
  await assert.rejects(w.grant({ secret_id: "nope" }), code("SECRET_NOT_FOUND"));
  await assert.rejects(w.grant({ mode: "forever" }), code("GRANT_INVALID"));
  await assert.rejects(
    w.grant({ uses: [{ kind: "fill", allowed_origins: [`${SHOP}/login`] }] }),
    code("GRANT_INVALID"),
  );
  assert.deepEqual(await w.store.list(), []);
  assert.deepEqual(w.sink.rows, []);
  // A database the vault never opened has no secrets at all.
  const dir = await Deno.makeTempDir({ prefix: "omotai-grants-" });
  const bare = openDatabase(join(dir, "omotai.db"));
  try {
    const store = new Grants(new SqliteGrantStore(bare), {
      audit: new MemorySink(),
      secrets: { has: (id) => Vault.has(bare, id) },
    });
    await assert.rejects(
      store.add({
        secret_id: "shop.password",
        agent: "ci-bot",
        purpose: "p",
        mode: "once",
        uses: [{ kind: "fill", allowed_origins: [SHOP] }],
      }),
      code("SECRET_NOT_FOUND"),
    );
  } finally {
    bare.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("Grants.approve() approves once; unknown, approved, expired and revoked are refused", async () => {
  await using w = await world();
  const g = await w.grant({}, false);
  const approved = await w.store.approve(g.id, { by: "console" });
  assert.equal(approved.state, "active");
  assert.equal(approved.approved_by, "console");
  assert.deepEqual(w.sink.rows.at(-1), {
    session: null,
    agent: "ci-bot",
    kind: "grant_approve",
    source: "operator",
    origin: null,
    method: null,
    decision: "allow",
    reason: "GRANT_APPROVED",
    module: "console",
    rule: g.id,
  });
  await assert.rejects(w.store.approve(g.id), code("GRANT_NOT_PENDING"));
  await assert.rejects(w.store.approve("g_aaaaaaaaaaaaaaaa"), code("GRANT_NOT_FOUND"));
  await assert.rejects(w.store.approve("not-an-id"), code("GRANT_NOT_FOUND"));
  const late = await w.grant({ expires: "1h" }, false);
  w.advance(3_600_000);
  await assert.rejects(w.store.approve(late.id), code("GRANT_EXPIRED"));
  const gone = await w.grant({}, false);
  await w.store.revoke(gone.id);
  await assert.rejects(w.store.approve(gone.id), code("GRANT_REVOKED"));
});

Deno.test("Grants.redeem() allows the agent's fill on the exact origin and audits the origin only", async () => {
  await using w = await world();
  const g = await w.grant();
  w.sink.rows = [];
  const [redeemed] = await w.redeem({
    grantIds: [g.id],
    origin: `${SHOP}/login?next=/account#top`,
  });
  assert.equal(redeemed.id, g.id);
  assert.equal(redeemed.secret_id, "shop.password");
  assert.equal(redeemed.redemptions, 1);
  assert.equal(redeemed.used_at, "2026-06-01T12:00:00.000Z");
  assert.deepEqual(w.sink.rows, [{
    session: "s-1",
    agent: "ci-bot",
    kind: "grant_redeem",
    source: "action",
    origin: SHOP,
    method: "fill",
    decision: "allow",
    reason: "GRANT_REDEEMED",
    module: null,
    rule: g.id,
  }]);
  const text = JSON.stringify(w.sink.rows);
  assert.equal(text.includes("login"), false, "no path in a row");
  assert.equal(text.includes("next="), false, "no query in a row");
  assert.equal(text.includes(VALUE), false, "no value in a row");
});

Deno.test("Grants.redeem() refuses a look-alike origin", async () => {
  await using w = await world();
  const g = await w.grant({
    uses: [{ kind: "fill", allowed_origins: [SHOP, "https://shop.test"] }],
  });
  for (
    const origin of [
      "http://127.0.0.2:8081",
      "http://127.0.0.1:8082",
      "http://127.0.0.1",
      "https://127.0.0.1:8081",
      "http://shop.test",
      "https://shop.test.",
      "https://shop.test.evil.test",
      "https://login.shop.test",
      "https://shop.test:8443",
      "null",
      "about:blank",
      "",
    ]
  ) {
    w.sink.rows = [];
    await assert.rejects(
      w.redeem({ grantIds: [g.id], origin }),
      code("GRANT_WRONG_ORIGIN"),
      origin,
    );
    assert.equal(w.sink.rows.length, 1, origin);
    assert.equal(w.sink.rows[0].decision, "deny");
    assert.equal(w.sink.rows[0].reason, "GRANT_WRONG_ORIGIN");
    assert.equal(w.sink.rows[0].rule, g.id);
  }
  assert.equal((await w.store.get(g.id))!.redemptions, 0, "no refusal counts as a redemption");
  // Case and the default port normalize to the same origin.
  assert.equal((await w.redeem({ grantIds: [g.id], origin: "HTTPS://SHOP.TEST:443/x" })).length, 1);
});

Deno.test("Grants.redeem() refuses another agent, another use kind, pending, revoked and expired", async () => {
  await using w = await world();
  const g = await w.grant({ expires: "1h" });
  await assert.rejects(
    w.redeem({ grantIds: [g.id], agent: "other-bot" }),
    code("GRANT_WRONG_AGENT"),
  );
  await assert.rejects(w.redeem({ grantIds: [g.id], agent: null }), code("GRANT_WRONG_AGENT"));
  await assert.rejects(w.redeem({ grantIds: [g.id], useKind: "capture" }), code("GRANT_WRONG_USE"));
  const pending = await w.grant({}, false);
  await assert.rejects(w.redeem({ grantIds: [pending.id] }), code("GRANT_PENDING"));
  const revoked = await w.grant();
  await w.store.revoke(revoked.id, { by: "api" });
  await assert.rejects(w.redeem({ grantIds: [revoked.id] }), code("GRANT_REVOKED"));
  await assert.rejects(w.redeem({ grantIds: ["g_aaaaaaaaaaaaaaaa"] }), code("GRANT_NOT_FOUND"));
  w.advance(3_600_000);
  await assert.rejects(w.redeem({ grantIds: [g.id] }), code("GRANT_EXPIRED"));
  assert.deepEqual(
    w.sink.rows.filter((r) => r.kind === "grant_redeem").map((r) => [r.reason, r.agent]),
    [
      ["GRANT_WRONG_AGENT", "other-bot"],
      ["GRANT_WRONG_AGENT", null],
      ["GRANT_WRONG_USE", "ci-bot"],
      ["GRANT_PENDING", "ci-bot"],
      ["GRANT_REVOKED", "ci-bot"],
      ["GRANT_NOT_FOUND", "ci-bot"],
      ["GRANT_EXPIRED", "ci-bot"],
    ],
  );
});

Deno.test("Grants.redeem() a once grant redeems exactly once, also across two connections", async () => {
  await using w = await world();
  const g = await w.grant({ mode: "once" });
  assert.equal((await w.redeem({ grantIds: [g.id] })).length, 1);
  assert.equal((await w.store.get(g.id))!.state, "used");
  await assert.rejects(w.redeem({ grantIds: [g.id] }), code("GRANT_USED"));
  await assert.rejects(w.redeem({ grantIds: [g.id], sessionId: "s-2" }), code("GRANT_USED"));

  // A second runtime on the same file sees the use at once (no cache).
  const other = await w.grant({ mode: "once" });
  const path = (w.db.prepare("PRAGMA database_list").get() as { file: string }).file;
  const db2 = openDatabase(path);
  try {
    const store2 = new Grants(new SqliteGrantStore(db2), {
      audit: new MemorySink(),
      secrets: { has: (id) => Vault.has(db2, id) },
      now: () => NOW,
    });
    assert.equal(
      (await store2.redeem({
        agent: "ci-bot",
        useKind: "fill",
        origin: SHOP,
        sessionId: "s-9",
        grantIds: [other.id],
      }))
        .length,
      1,
    );
    await assert.rejects(w.redeem({ grantIds: [other.id] }), code("GRANT_USED"));
  } finally {
    db2.close();
  }
  assert.equal((await w.store.get(other.id))!.redemptions, 1);
});

Deno.test("Grants.redeem() a session grant binds to the first session and refuses every other", async () => {
  await using w = await world();
  const g = await w.grant({ mode: "session" });
  assert.equal((await w.redeem({ grantIds: [g.id], sessionId: "s-a" }))[0].session_id, "s-a");
  assert.equal((await w.redeem({ grantIds: [g.id], sessionId: "s-a" }))[0].redemptions, 2);
  await assert.rejects(
    w.redeem({ grantIds: [g.id], sessionId: "s-b" }),
    code("GRANT_WRONG_SESSION"),
  );
  assert.equal((await w.store.get(g.id))!.session_id, "s-a");
  assert.equal((await w.store.get(g.id))!.state, "active");
  await assert.rejects(w.redeem({ grantIds: [g.id], sessionId: "" }), code("GRANT_INVALID"));
});

Deno.test("Grants.redeem() a standing grant serves every session until expiry or revocation", async () => {
  await using w = await world();
  const g = await w.grant({ mode: "standing", expires: "1d" });
  for (const s of ["s-1", "s-2", "s-3"]) await w.redeem({ grantIds: [g.id], sessionId: s });
  assert.equal((await w.store.get(g.id))!.redemptions, 3);
  assert.equal((await w.store.get(g.id))!.session_id, null);
  w.advance(24 * 3_600_000 - 1);
  assert.equal((await w.redeem({ grantIds: [g.id] })).length, 1);
  w.advance(1);
  await assert.rejects(w.redeem({ grantIds: [g.id] }), code("GRANT_EXPIRED"));
  const h = await w.grant({ mode: "standing" });
  await w.redeem({ grantIds: [h.id] });
  await w.store.revoke(h.id);
  await assert.rejects(w.redeem({ grantIds: [h.id] }), code("GRANT_REVOKED"));
});

Deno.test("Grants.redeem() named grants pass all or none: a refused one leaves a once grant unused", async () => {
  await using w = await world();
  const user = await w.grant({ secret_id: "shop.user", mode: "once" });
  const password = await w.grant({
    mode: "once",
    uses: [{ kind: "fill", allowed_origins: ["https://other.test"] }],
  });
  w.sink.rows = [];
  await assert.rejects(w.redeem({ grantIds: [user.id, password.id] }), code("GRANT_WRONG_ORIGIN"));
  assert.equal(
    (await w.store.get(user.id))!.state,
    "active",
    "the passing once grant was not consumed",
  );
  assert.equal((await w.store.get(user.id))!.redemptions, 0);
  assert.deepEqual(w.sink.rows.map((r) => [r.decision, r.reason, r.rule]), [
    ["deny", "GRANT_WRONG_ORIGIN", password.id],
  ]);
  await assert.rejects(w.redeem({ grantIds: [] }), code("GRANT_NOT_FOUND"));
  // The same id twice is one grant.
  assert.equal((await w.redeem({ grantIds: [user.id, user.id] })).length, 1);
});

Deno.test("Grants.redeem() without ids returns every passing grant, or the closest refusal", async () => {
  await using w = await world();
  await assert.rejects(w.redeem(), code("GRANT_NOT_FOUND"));
  assert.equal(w.sink.rows.at(-1)!.rule, null);
  await w.grant({}, false);
  const wrongOrigin = await w.grant({
    uses: [{ kind: "fill", allowed_origins: ["https://other.test"] }],
  });
  w.sink.rows = [];
  // Pending comes before the origin check: the origin mismatch came closer.
  await assert.rejects(w.redeem(), code("GRANT_WRONG_ORIGIN"));
  assert.deepEqual(w.sink.rows.map((r) => r.rule), [wrongOrigin.id]);
  const a = await w.grant();
  // A capture grant of the agent (its target empty) is no candidate for a fill, and a search
  // for it neither revokes it nor takes its empty target for a removed secret.
  const b = await w.grant({
    secret_id: "gh.pem",
    mode: "once",
    uses: [{ kind: "capture", allowed_origins: [SHOP], workflow: "github_app", output: "pem" }],
  });
  assert.deepEqual((await w.redeem()).map((g) => g.id), [a.id]);
  await assert.rejects(w.redeem({ useKind: "capture" }), code("GRANT_WRONG_USE"));
  await assert.rejects(w.redeem({ grantIds: [b.id] }), code("GRANT_WRONG_USE"));
  assert.equal((await w.store.get(b.id))!.state, "active");
  assert.equal((await w.store.get(b.id))!.redemptions, 0);
  // Another agent's grants are not even candidates.
  await assert.rejects(w.redeem({ agent: "other-bot" }), code("GRANT_NOT_FOUND"));
});

Deno.test("Grants.redeem() writes no model-supplied junk id into the audit", async () => {
  await using w = await world();
  await assert.rejects(
    w.redeem({ grantIds: ["<script>steal()</script>"] }),
    code("GRANT_NOT_FOUND"),
  );
  assert.equal(w.sink.rows.at(-1)!.rule, null);
  assert.equal(JSON.stringify(w.sink.rows).includes("steal"), false);
});

Deno.test("Grants.revokeForSecret() revokes the secret's grants only, with SECRET_REMOVED rows", async () => {
  await using w = await world();
  const a = await w.grant();
  const b = await w.grant({ mode: "once" }, false);
  const already = await w.grant();
  await w.store.revoke(already.id);
  const other = await w.grant({ secret_id: "shop.user" });
  w.sink.rows = [];
  assert.equal(await w.store.revokeForSecret("shop.password", { by: "cli" }), 2);
  for (const id of [a.id, b.id]) {
    const g = (await w.store.get(id))!;
    assert.equal(g.state, "revoked");
    assert.equal(g.revoke_reason, "SECRET_REMOVED");
    assert.equal(g.revoked_by, "cli");
  }
  assert.equal((await w.store.get(already.id))!.revoke_reason, "GRANT_REVOKED");
  assert.equal((await w.store.get(other.id))!.state, "active");
  assert.deepEqual(
    w.sink.rows.map((r) => [r.kind, r.reason, r.rule, r.module]).sort(),
    [["grant_revoke", "SECRET_REMOVED", a.id, "cli"], [
      "grant_revoke",
      "SECRET_REMOVED",
      b.id,
      "cli",
    ]]
      .sort(),
  );
  assert.equal(await w.store.revokeForSecret("shop.password"), 0);
  await assert.rejects(w.redeem({ grantIds: [a.id] }), code("GRANT_REVOKED"));
});

Deno.test("Grants.redeem() revokes and refuses a grant whose secret left the vault", async () => {
  await using w = await world();
  const g = await w.grant();
  assert.equal(await w.vault.remove("shop.password"), true);
  w.sink.rows = [];
  await assert.rejects(w.redeem({ grantIds: [g.id] }), code("GRANT_REVOKED"));
  const after = (await w.store.get(g.id))!;
  assert.equal(after.state, "revoked");
  assert.equal(after.revoke_reason, "SECRET_REMOVED");
  assert.equal(after.revoked_by, "vault");
  assert.deepEqual(w.sink.rows.map((r) => [r.kind, r.reason, r.module]), [
    ["grant_revoke", "SECRET_REMOVED", "vault"],
    ["grant_redeem", "GRANT_REVOKED", null],
  ]);
});

Deno.test("Grants.revoke() refuses an unknown or already revoked grant", async () => {
  await using w = await world();
  const g = await w.grant();
  const revoked = await w.store.revoke(g.id, { by: "api" });
  assert.equal(revoked.state, "revoked");
  assert.equal(revoked.revoked_by, "api");
  assert.equal(revoked.revoke_reason, "GRANT_REVOKED");
  await assert.rejects(w.store.revoke(g.id), code("GRANT_REVOKED"));
  await assert.rejects(w.store.revoke("g_bbbbbbbbbbbbbbbb"), code("GRANT_NOT_FOUND"));
});

Deno.test("Grants audit failures: an unaudited add or approve never stays live; a consumed once grant stays used", async () => {
  await using w = await world();
  w.sink.failing = true;
  await assert.rejects(w.grant(), code("AUDIT_UNAVAILABLE"));
  const [added] = await w.store.list();
  assert.equal(added.state, "revoked");
  assert.equal(added.revoke_reason, "AUDIT_UNAVAILABLE");
  w.sink.failing = false;
  const pending = await w.grant({}, false);
  w.sink.failing = true;
  await assert.rejects(w.store.approve(pending.id), code("AUDIT_UNAVAILABLE"));
  assert.equal((await w.store.get(pending.id))!.state, "revoked");
  w.sink.failing = false;
  const once = await w.grant({ mode: "once" });
  w.sink.failing = true;
  await assert.rejects(w.redeem({ grantIds: [once.id] }), code("AUDIT_UNAVAILABLE"));
  assert.equal((await w.store.get(once.id))!.state, "used", "fail closed: the use is spent");
  // A refusal stays a refusal when its row cannot be written.
  await assert.rejects(w.redeem({ grantIds: [once.id] }), code("GRANT_USED"));
  // A revocation stands even when its row cannot be written.
  w.sink.failing = false;
  const standing = await w.grant();
  w.sink.failing = true;
  await assert.rejects(w.store.revoke(standing.id), code("AUDIT_UNAVAILABLE"));
  assert.equal((await w.store.get(standing.id))!.state, "revoked");
});

Deno.test("Grants.list() is newest first and filters by secret and agent", async () => {
  await using w = await world();
  const a = await w.grant();
  w.advance(1_000);
  const b = await w.grant({ secret_id: "shop.user", agent: "helper" });
  w.advance(1_000);
  const c = await w.grant({ agent: "helper" });
  assert.deepEqual((await w.store.list()).map((g) => g.id), [c.id, b.id, a.id]);
  assert.deepEqual((await w.store.list({ secretId: "shop.password" })).map((g) => g.id), [
    c.id,
    a.id,
  ]);
  assert.deepEqual((await w.store.list({ agent: "helper" })).map((g) => g.id), [c.id, b.id]);
  assert.equal(await w.store.get("g_cccccccccccccccc"), undefined);
});

Deno.test("Grants over a real SqliteAuditLog: rows chain and verify, and hold no value", async () => {
  await using w = await world();
  const audit = new SqliteAuditLog(w.db, { redactor: processRedactor() });
  const store = new Grants(new SqliteGrantStore(w.db), { audit, secrets: w.vault, now: () => NOW });
  const g = await store.add({
    secret_id: "shop.password",
    agent: "ci-bot",
    purpose: "log in",
    mode: "once",
    uses: [{ kind: "fill", allowed_origins: [SHOP] }],
  }, { by: "cli" });
  await store.approve(g.id, { by: "console" });
  await store.redeem({
    agent: "ci-bot",
    useKind: "fill",
    origin: `${SHOP}/a?b=c`,
    sessionId: "s-1",
  });
  await assert.rejects(
    store.redeem({ agent: "ci-bot", useKind: "fill", origin: SHOP, sessionId: "s-1" }),
    code("GRANT_USED"),
  );
  const rows = audit.rows(0, 100);
  assert.deepEqual(rows.map((r) => [r.kind, r.source, r.decision, r.reason, r.origin]), [
    ["grant_add", "operator", "event", "GRANT_ADDED", null],
    ["grant_approve", "operator", "allow", "GRANT_APPROVED", null],
    ["grant_redeem", "action", "allow", "GRANT_REDEEMED", SHOP],
    ["grant_redeem", "action", "deny", "GRANT_USED", SHOP],
  ]);
  assert.equal(verifyAudit(w.db).ok, true);
  assert.equal(JSON.stringify(rows).includes(VALUE), false);
});

Deno.test("Grants asks its secrets port which secrets the vault holds", async () => {
  await using w = await world();
  const asked: string[] = [];
  const known = new Set(["shop.password"]);
  const store = new Grants(new SqliteGrantStore(w.db), {
    audit: w.sink,
    now: () => NOW,
    secrets: {
      has: (id) => {
        asked.push(id);
        return known.has(id);
      },
    },
  });
  const add = (secret_id: string) =>
    store.add({
      secret_id,
      agent: "ci-bot",
      purpose: "log in to the shop",
      mode: "standing",
      uses: [{ kind: "fill", allowed_origins: [SHOP] }],
    }, { approve: true, by: "cli" });
  const grant = await add("shop.password");
  // In the vault's table, but not in the port's answer: unknown to this store.
  await assert.rejects(add("shop.user"), code("SECRET_NOT_FOUND"));
  assert.deepEqual(asked, ["shop.password", "shop.user"]);
  known.delete("shop.password");
  await assert.rejects(
    store.redeem({ agent: "ci-bot", useKind: "fill", origin: SHOP, sessionId: "s" }),
    code("GRANT_REVOKED"),
  );
  assert.equal((await store.list()).find((g) => g.id === grant.id)?.state, "revoked");
});
