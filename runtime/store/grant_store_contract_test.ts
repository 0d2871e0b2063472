/**
 * One contract for every `GrantStore` (the embedded `SqliteGrantStore`, and `PgGrantStore`
 * reached as the runtime's non-owner role under row-level security), run through the one
 * flow over them (`Grants`): the same calls give the same grants, the same refusals and the
 * same audit rows. Then PostgreSQL's
 * own: two runtimes racing for one grant, the tenant wall, and the runtime's role sending any
 * SQL it likes against the grants table.
 */
import assert from "node:assert/strict";
import postgres from "postgres";
import { assertRefused, clusterTeardown, startPostgres } from "../../tests/helpers/postgres.ts";
import { openDatabase } from "./database.ts";
import { PgDatabase } from "./pg_database.ts";
import { addTenant } from "./pg_tenants.ts";
import { GrantError } from "../grants/errors.ts";
import type { Grant } from "../grants/grant.ts";
import type { GrantAuditEvent, GrantAuditSink } from "../grants/grant_audit.ts";
import { Grants } from "../grants/grants.ts";
import { SqliteGrantStore } from "./sqlite_grant_store.ts";
import { PgGrantStore } from "./pg_grant_store.ts";
import type { RedeemRequest } from "../grants/redeem_checks.ts";
import type {
  CaptureCheckRequest,
  CaptureConsumeRequest,
  CaptureOutput,
  CaptureTarget,
} from "../grants/capture_checks.ts";

const pg = await startPostgres();
const owner = await PgDatabase.open({ url: pg.ownerUrl }, "owner");
await owner.migrate();
const app = await PgDatabase.open({ url: pg.appUrl });
let tenants = 0;

const NOW = Date.parse("2026-06-01T12:00:00.000Z");
const SHOP = "http://127.0.0.1:8081";
const GITHUB = "https://github.com";

/** A capture grant's input: `github_app`'s `pem` into the empty `gh.pem`, once. */
function captureInput(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    secret_id: "gh.pem",
    agent: "ci-bot",
    purpose: "register the CI GitHub App",
    mode: "once",
    uses: [{ kind: "capture", allowed_origins: [GITHUB], workflow: "github_app", output: "pem" }],
    ...overrides,
  };
}

/** The use of a capture grant for `output` of `workflow` on `origins`. */
const captureUse = (output: string, workflow = "github_app", origins = [GITHUB]) => [{
  kind: "capture",
  allowed_origins: origins,
  workflow,
  output,
}];
const code = (c: string) => (err: unknown) => err instanceof GrantError && err.code === c;

class MemorySink implements GrantAuditSink {
  rows: GrantAuditEvent[] = [];
  failing = false;
  append(event: GrantAuditEvent): void {
    if (this.failing) throw new Error("disk full");
    this.rows.push(event);
  }
}

/** What a store is built over: the sink, the vault's answer, the clock. */
interface Deps {
  sink: MemorySink;
  secrets: { has(id: string): boolean };
  now: () => number;
}

interface Adapter {
  name: string;
  open(deps: Deps): Promise<{ store: Grants; tenant: string } & AsyncDisposable>;
}

const ADAPTERS: Adapter[] = [
  {
    name: "sqlite",
    open(deps) {
      const db = openDatabase(":memory:");
      return Promise.resolve({
        store: new Grants(new SqliteGrantStore(db), {
          audit: deps.sink,
          secrets: deps.secrets,
          now: deps.now,
        }),
        tenant: "default",
        [Symbol.asyncDispose]: () => Promise.resolve(db.close()),
      });
    },
  },
  {
    name: "postgres",
    async open(deps) {
      const tenant = `grants-${++tenants}`;
      await addTenant(owner, tenant);
      return {
        // The PostgreSQL vault answers asynchronously: so does this one.
        store: new Grants(new PgGrantStore(app, tenant), {
          audit: deps.sink,
          secrets: { has: (id) => Promise.resolve(deps.secrets.has(id)) },
          now: deps.now,
        }),
        tenant,
        [Symbol.asyncDispose]: () => Promise.resolve(),
      };
    },
  },
];

interface World extends AsyncDisposable {
  store: Grants;
  tenant: string;
  sink: MemorySink;
  /** The secrets the vault holds (`shop.password`, `shop.user`). */
  vault: Set<string>;
  /** The secret ids the store asked about, in order. */
  asked: string[];
  advance(ms: number): void;
  /** A grant of shop.password for ci-bot (fill on SHOP), approved unless told otherwise. */
  grant(overrides?: Record<string, unknown>, approve?: boolean): Promise<Grant>;
  redeem(overrides?: Partial<RedeemRequest>): Promise<Grant[]>;
  /**
   * A capture grant for ci-bot: workflow `github_app`, output `pem`, on GITHUB, into the empty
   * `gh.pem`, once, approved unless told otherwise.
   */
  capture(overrides?: Record<string, unknown>, approve?: boolean): Promise<Grant>;
  /** `checkCapture` for ci-bot on GITHUB, workflow `github_app`, of `outputs`. */
  check(
    outputs: CaptureOutput[],
    overrides?: Partial<CaptureCheckRequest>,
  ): Promise<CaptureTarget[]>;
  /** `consumeCapture` of `grantId` for ci-bot on GITHUB, `github_app`, output `pem`. */
  consume(grantId: string, overrides?: Partial<CaptureConsumeRequest>): Promise<Grant>;
}

async function world(adapter: Adapter): Promise<World> {
  let clock = NOW;
  const sink = new MemorySink();
  const vault = new Set(["shop.password", "shop.user"]);
  const asked: string[] = [];
  const opened = await adapter.open({
    sink,
    now: () => clock,
    secrets: {
      has: (id) => {
        asked.push(id);
        return vault.has(id);
      },
    },
  });
  const { store } = opened;
  return {
    store,
    tenant: opened.tenant,
    sink,
    vault,
    asked,
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
    capture: (overrides = {}, approve = true) =>
      store.add(captureInput(overrides), { approve, by: "cli" }),
    check: (outputs, overrides = {}) =>
      store.checkCapture({
        agent: "ci-bot",
        origin: `${GITHUB}/settings/apps/new?state=x`,
        workflow: "github_app",
        outputs,
        sessionId: "s-1",
        ...overrides,
      }),
    consume: (grantId, overrides = {}) =>
      store.consumeCapture(grantId, {
        agent: "ci-bot",
        origin: GITHUB,
        workflow: "github_app",
        output: "pem",
        sessionId: "s-1",
        ...overrides,
      }),
    [Symbol.asyncDispose]: () => opened[Symbol.asyncDispose](),
  };
}

for (const adapter of ADAPTERS) {
  const t = (name: string, fn: (w: World) => Promise<void>) =>
    Deno.test(`Grants (${adapter.name}): ${name}`, async () => {
      await using w = await world(adapter);
      await fn(w);
    });

  t("add() starts pending, reads back equal, and audits grant_add with the door", async (w) => {
    const g = await w.grant({ mode: "once", expires: "2h" }, false);
    assert.match(g.id, /^g_[a-z2-7]{16}$/);
    assert.equal(g.state, "pending");
    assert.equal(g.approved_at, null);
    assert.equal(g.approved_by, null);
    assert.equal(g.created_by, "cli");
    assert.equal(g.created_at, "2026-06-01T12:00:00.000Z");
    assert.equal(g.expires_at, "2026-06-01T14:00:00.000Z");
    assert.equal(g.purpose, "log in to the shop");
    assert.equal(g.redemptions, 0);
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

  t("add() with approve is active at once and writes add and approve rows", async (w) => {
    const g = await w.grant({
      uses: [{ kind: "fill", allowed_origins: ["HTTPS://Shop.Test:443/", SHOP, SHOP] }],
    });
    assert.equal(g.state, "active");
    assert.equal(g.approved_by, "cli");
    assert.equal(g.approved_at, "2026-06-01T12:00:00.000Z");
    assert.deepEqual(g.uses, [{ kind: "fill", allowed_origins: ["https://shop.test", SHOP] }]);
    assert.deepEqual(w.sink.rows.map((r) => [r.kind, r.decision, r.reason, r.module, r.rule]), [
      ["grant_add", "event", "GRANT_ADDED", "cli", g.id],
      ["grant_approve", "allow", "GRANT_APPROVED", "cli", g.id],
    ]);
    assert.equal((await w.redeem({ grantIds: [g.id] }))[0].id, g.id);
  });

  t("add() refuses a secret the vault does not hold and bad input, keeping nothing", async (w) => {
    await assert.rejects(w.grant({ secret_id: "nope" }), code("SECRET_NOT_FOUND"));
    assert.deepEqual(w.asked, ["nope"]);
    for (
      const bad of [
        { mode: "forever" },
        { uses: [{ kind: "fill", allowed_origins: [`${SHOP}/login`] }] },
        {
          uses: [{ kind: "fill", allowed_origins: [SHOP] }, { kind: "fill", allowed_origins: [] }],
        },
        { expires: "2020-01-01T00:00:00Z" },
        { expires: "400d" },
        { purpose: "a\u202eb" },
        { secret_id: "Shop Password" },
        { agent: "" },
        { extra: 1 },
      ]
    ) {
      await assert.rejects(w.grant(bad), code("GRANT_INVALID"), JSON.stringify(bad));
    }
    await assert.rejects(w.store.add("not an object"), code("GRANT_INVALID"));
    assert.deepEqual(w.asked, ["nope"], "bad input is refused before the vault is asked");
    assert.deepEqual(await w.store.list(), []);
    assert.deepEqual(w.sink.rows, []);
  });

  t("approve() approves once; unknown, approved, expired and revoked are refused", async (w) => {
    const g = await w.grant({}, false);
    w.advance(1_000);
    const approved = await w.store.approve(g.id, { by: "console" });
    assert.equal(approved.state, "active");
    assert.equal(approved.approved_by, "console");
    assert.equal(approved.approved_at, "2026-06-01T12:00:01.000Z");
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
    assert.equal((await w.store.get(late.id))!.state, "expired");
    const gone = await w.grant({}, false);
    await w.store.revoke(gone.id);
    await assert.rejects(w.store.approve(gone.id), code("GRANT_REVOKED"));
    assert.equal((await w.store.get(gone.id))!.approved_at, null);
  });

  t("revoke() revokes pending or active once; unknown and revoked are refused", async (w) => {
    const g = await w.grant();
    const pending = await w.grant({}, false);
    w.sink.rows = [];
    const revoked = await w.store.revoke(g.id, { by: "api" });
    assert.equal(revoked.state, "revoked");
    assert.equal(revoked.revoked_by, "api");
    assert.equal(revoked.revoke_reason, "GRANT_REVOKED");
    assert.equal(revoked.revoked_at, "2026-06-01T12:00:00.000Z");
    assert.equal((await w.store.revoke(pending.id)).revoked_by, "operator");
    assert.deepEqual(w.sink.rows.map((r) => [r.kind, r.decision, r.reason, r.module, r.rule]), [
      ["grant_revoke", "event", "GRANT_REVOKED", "api", g.id],
      ["grant_revoke", "event", "GRANT_REVOKED", "operator", pending.id],
    ]);
    await assert.rejects(w.store.revoke(g.id), code("GRANT_REVOKED"));
    await assert.rejects(w.store.revoke("g_bbbbbbbbbbbbbbbb"), code("GRANT_NOT_FOUND"));
    await assert.rejects(w.store.revoke("../etc"), code("GRANT_NOT_FOUND"));
    await assert.rejects(w.redeem({ grantIds: [g.id] }), code("GRANT_REVOKED"));
    // An expired grant can still be revoked.
    const late = await w.grant({ expires: "1m" });
    w.advance(60_000);
    assert.equal((await w.store.revoke(late.id)).state, "revoked");
  });

  t(
    "redeem() allows the agent's fill on the exact origin and audits the origin only",
    async (w) => {
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
      assert.equal(redeemed.last_redeemed_at, "2026-06-01T12:00:00.000Z");
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
      assert.deepEqual(await w.store.get(g.id), redeemed);
    },
  );

  t("redeem() refuses a look-alike origin with one deny row each", async (w) => {
    const g = await w.grant({
      uses: [{ kind: "fill", allowed_origins: [SHOP, "https://shop.test"] }],
    });
    for (
      const origin of [
        "http://127.0.0.2:8081",
        "http://127.0.0.1:8082",
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
      assert.deepEqual(
        w.sink.rows.map((r) => [r.decision, r.reason, r.rule]),
        [["deny", "GRANT_WRONG_ORIGIN", g.id]],
        origin,
      );
    }
    assert.equal((await w.store.get(g.id))!.redemptions, 0, "no refusal counts");
    assert.equal(
      (await w.redeem({ grantIds: [g.id], origin: "HTTPS://SHOP.TEST:443/x" })).length,
      1,
    );
  });

  t(
    "redeem() refuses another agent, another use, pending, revoked, unknown and expired, in check order",
    async (w) => {
      const g = await w.grant({ expires: "1h" });
      await assert.rejects(
        w.redeem({ grantIds: [g.id], agent: "other-bot" }),
        code("GRANT_WRONG_AGENT"),
      );
      await assert.rejects(w.redeem({ grantIds: [g.id], agent: null }), code("GRANT_WRONG_AGENT"));
      await assert.rejects(
        w.redeem({ grantIds: [g.id], useKind: "capture" }),
        code("GRANT_WRONG_USE"),
      );
      const pending = await w.grant({}, false);
      await assert.rejects(w.redeem({ grantIds: [pending.id] }), code("GRANT_PENDING"));
      const revoked = await w.grant();
      await w.store.revoke(revoked.id, { by: "api" });
      await assert.rejects(w.redeem({ grantIds: [revoked.id] }), code("GRANT_REVOKED"));
      await assert.rejects(w.redeem({ grantIds: ["g_aaaaaaaaaaaaaaaa"] }), code("GRANT_NOT_FOUND"));
      // The request's own clock wins over the store's.
      await assert.rejects(
        w.redeem({ grantIds: [g.id], now: NOW + 3_600_000 }),
        code("GRANT_EXPIRED"),
      );
      w.advance(3_600_000 - 1);
      assert.equal((await w.redeem({ grantIds: [g.id] })).length, 1, "the last millisecond");
      w.advance(1);
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
          ["GRANT_REDEEMED", "ci-bot"],
          ["GRANT_EXPIRED", "ci-bot"],
        ],
      );
    },
  );

  t("redeem() a once grant redeems exactly once, in any session", async (w) => {
    const g = await w.grant({ mode: "once" });
    const [used] = await w.redeem({ grantIds: [g.id] });
    assert.equal(used.state, "used");
    assert.equal(used.session_id, null);
    assert.equal((await w.store.get(g.id))!.state, "used");
    await assert.rejects(w.redeem({ grantIds: [g.id] }), code("GRANT_USED"));
    await assert.rejects(w.redeem({ grantIds: [g.id], sessionId: "s-2" }), code("GRANT_USED"));
    await assert.rejects(w.redeem(), code("GRANT_USED"));
    assert.equal((await w.store.get(g.id))!.redemptions, 1);
    // A used grant can still be revoked, and then reads revoked.
    assert.equal((await w.store.revoke(g.id)).state, "revoked");
  });

  t("redeem() a session grant binds to the first session and refuses every other", async (w) => {
    const g = await w.grant({ mode: "session" });
    w.advance(5_000);
    const [first] = await w.redeem({ grantIds: [g.id], sessionId: "s-a" });
    assert.equal(first.session_id, "s-a");
    assert.equal(first.used_at, "2026-06-01T12:00:05.000Z");
    w.advance(5_000);
    const [second] = await w.redeem({ grantIds: [g.id], sessionId: "s-a" });
    assert.equal(second.redemptions, 2);
    assert.equal(second.used_at, "2026-06-01T12:00:05.000Z", "used_at is the first redemption");
    assert.equal(second.last_redeemed_at, "2026-06-01T12:00:10.000Z");
    await assert.rejects(
      w.redeem({ grantIds: [g.id], sessionId: "s-b" }),
      code("GRANT_WRONG_SESSION"),
    );
    const after = (await w.store.get(g.id))!;
    assert.equal(after.session_id, "s-a");
    assert.equal(after.state, "active");
    assert.equal(after.redemptions, 2);
    await assert.rejects(w.redeem({ grantIds: [g.id], sessionId: "" }), code("GRANT_INVALID"));
  });

  t("redeem() a standing grant serves every session until expiry or revocation", async (w) => {
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

  t("redeem() named grants pass all or none; the same id twice is one grant", async (w) => {
    const user = await w.grant({ secret_id: "shop.user", mode: "once" });
    const password = await w.grant({
      mode: "once",
      uses: [{ kind: "fill", allowed_origins: ["https://other.test"] }],
    });
    w.sink.rows = [];
    await assert.rejects(
      w.redeem({ grantIds: [user.id, password.id] }),
      code("GRANT_WRONG_ORIGIN"),
    );
    assert.equal((await w.store.get(user.id))!.state, "active", "the passing once grant stays");
    assert.equal((await w.store.get(user.id))!.redemptions, 0);
    assert.deepEqual(w.sink.rows.map((r) => [r.decision, r.reason, r.rule]), [
      ["deny", "GRANT_WRONG_ORIGIN", password.id],
    ]);
    await assert.rejects(w.redeem({ grantIds: [] }), code("GRANT_NOT_FOUND"));
    assert.equal((await w.redeem({ grantIds: [user.id, user.id] })).length, 1);
    // Two passing grants come back in the order named.
    const a = await w.grant();
    const b = await w.grant({ secret_id: "shop.user" });
    assert.deepEqual((await w.redeem({ grantIds: [b.id, a.id] })).map((g) => g.id), [b.id, a.id]);
  });

  t("redeem() without ids returns every passing grant, or the closest refusal", async (w) => {
    await assert.rejects(w.redeem(), code("GRANT_NOT_FOUND"));
    assert.equal(w.sink.rows.at(-1)!.rule, null);
    await w.grant({}, false);
    const wrongOrigin = await w.grant({
      uses: [{ kind: "fill", allowed_origins: ["https://other.test"] }],
    });
    w.sink.rows = [];
    await assert.rejects(w.redeem(), code("GRANT_WRONG_ORIGIN"));
    assert.deepEqual(w.sink.rows.map((r) => r.rule), [wrongOrigin.id]);
    const a = await w.grant();
    // A capture grant (its target empty) is never a fill candidate, and is left as it was.
    const b = await w.capture();
    const c = await w.grant({ secret_id: "shop.user", mode: "once" });
    w.sink.rows = [];
    assert.deepEqual((await w.redeem()).map((g) => g.id), [a.id, c.id], "oldest first");
    assert.deepEqual(w.sink.rows.map((r) => [r.decision, r.rule]), [
      ["allow", a.id],
      ["allow", c.id],
    ]);
    await assert.rejects(w.redeem({ useKind: "capture" }), code("GRANT_WRONG_USE"));
    assert.equal((await w.store.get(b.id))!.state, "active");
    await assert.rejects(w.redeem({ agent: "other-bot" }), code("GRANT_NOT_FOUND"));
    await assert.rejects(w.redeem({ agent: null }), code("GRANT_NOT_FOUND"));
  });

  t("redeem() writes no model-supplied junk id into the audit", async (w) => {
    await assert.rejects(
      w.redeem({ grantIds: ["<script>steal()</script>", "g_AAAAAAAAAAAAAAAA"] }),
      code("GRANT_NOT_FOUND"),
    );
    assert.deepEqual(w.sink.rows.map((r) => r.rule), [null, null]);
    assert.equal(JSON.stringify(w.sink.rows).includes("steal"), false);
  });

  t(
    "revokeForSecret() revokes the secret's live grants only, with SECRET_REMOVED rows",
    async (w) => {
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
        w.sink.rows.map((r) => [r.kind, r.decision, r.reason, r.rule, r.module]).sort(),
        [
          ["grant_revoke", "event", "SECRET_REMOVED", a.id, "cli"],
          ["grant_revoke", "event", "SECRET_REMOVED", b.id, "cli"],
        ].sort(),
      );
      assert.equal(await w.store.revokeForSecret("shop.password"), 0);
      assert.equal(await w.store.revokeForSecret("no.such"), 0);
      await assert.rejects(w.redeem({ grantIds: [a.id] }), code("GRANT_REVOKED"));
    },
  );

  t("redeem() revokes and refuses a grant whose secret left the vault", async (w) => {
    const g = await w.grant();
    const other = await w.grant({ secret_id: "shop.user" });
    w.vault.delete("shop.password");
    w.sink.rows = [];
    await assert.rejects(w.redeem({ grantIds: [g.id] }), code("GRANT_REVOKED"));
    const after = (await w.store.get(g.id))!;
    assert.equal(after.state, "revoked");
    assert.equal(after.revoke_reason, "SECRET_REMOVED");
    assert.equal(after.revoked_by, "vault");
    assert.deepEqual(w.sink.rows.map((r) => [r.kind, r.reason, r.module, r.rule]), [
      ["grant_revoke", "SECRET_REMOVED", "vault", g.id],
      ["grant_redeem", "GRANT_REVOKED", null, g.id],
    ]);
    // Without ids, the gone secret's grant is revoked on the way and the other one passes.
    const h = await w.grant({ secret_id: "shop.user", mode: "once" });
    w.vault.add("shop.password");
    const i = await w.grant();
    w.vault.delete("shop.password");
    w.sink.rows = [];
    assert.deepEqual((await w.redeem()).map((x) => x.id), [other.id, h.id]);
    assert.equal((await w.store.get(i.id))!.revoked_by, "vault");
    assert.deepEqual(w.sink.rows.map((r) => [r.kind, r.decision, r.reason, r.rule]), [
      ["grant_revoke", "event", "SECRET_REMOVED", i.id],
      ["grant_redeem", "allow", "GRANT_REDEEMED", other.id],
      ["grant_redeem", "allow", "GRANT_REDEEMED", h.id],
    ]);
  });

  t(
    "audit failures: an unaudited add or approve never stays live; a consumed once grant stays used; a revocation stands",
    async (w) => {
      w.sink.failing = true;
      await assert.rejects(w.grant(), code("AUDIT_UNAVAILABLE"));
      const [added] = await w.store.list();
      assert.equal(added.state, "revoked");
      assert.equal(added.revoke_reason, "AUDIT_UNAVAILABLE");
      assert.equal(added.revoked_by, "cli");
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
      await assert.rejects(w.redeem({ grantIds: [once.id] }), code("GRANT_USED"));
      w.sink.failing = false;
      const standing = await w.grant();
      w.sink.failing = true;
      await assert.rejects(w.store.revoke(standing.id), code("AUDIT_UNAVAILABLE"));
      assert.equal((await w.store.get(standing.id))!.state, "revoked");
      w.sink.failing = false;
      const more = await w.grant();
      w.sink.failing = true;
      await assert.rejects(w.store.revokeForSecret("shop.password"), code("AUDIT_UNAVAILABLE"));
      assert.equal((await w.store.get(more.id))!.revoke_reason, "SECRET_REMOVED");
    },
  );

  t(
    "list() is newest first (ties in the order added) and filters by secret and agent",
    async (w) => {
      const a = await w.grant();
      w.advance(1_000);
      const b = await w.grant({ secret_id: "shop.user", agent: "helper" });
      w.advance(1_000);
      const c = await w.grant({ agent: "helper" });
      const d = await w.grant({ agent: "helper", mode: "once" }, false);
      assert.deepEqual((await w.store.list()).map((g) => g.id), [d.id, c.id, b.id, a.id]);
      assert.deepEqual((await w.store.list({ secretId: "shop.password" })).map((g) => g.id), [
        d.id,
        c.id,
        a.id,
      ]);
      assert.deepEqual((await w.store.list({ agent: "helper" })).map((g) => g.id), [
        d.id,
        c.id,
        b.id,
      ]);
      assert.deepEqual(
        (await w.store.list({ agent: "helper", secretId: "shop.user" })).map((g) => g.id),
        [b.id],
      );
      assert.deepEqual(await w.store.list({ agent: "nobody" }), []);
      const listed = await w.store.list();
      assert.deepEqual(listed[0], await w.store.get(d.id), "list and get read alike");
      assert.equal(await w.store.get("g_cccccccccccccccc"), undefined);
      assert.equal(await w.store.get("' OR 1=1 --"), undefined);
      // States are derived when read.
      w.advance(24 * 3_600_000);
      assert.deepEqual((await w.store.list()).map((g) => g.state), [
        "expired",
        "expired",
        "expired",
        "expired",
      ]);
    },
  );

  t("the secrets port is asked for the grant's secret; a redemption asks again", async (w) => {
    const g = await w.grant();
    await assert.rejects(w.grant({ secret_id: "shop.other" }), code("SECRET_NOT_FOUND"));
    assert.deepEqual(w.asked, ["shop.password", "shop.other"]);
    w.asked.length = 0;
    await w.redeem({ grantIds: [g.id] });
    assert.deepEqual([...new Set(w.asked)], ["shop.password"]);
    w.asked.length = 0;
    // Not asked for a grant refused before the secret check (another agent's).
    await assert.rejects(w.redeem({ grantIds: [g.id], agent: "x" }), code("GRANT_WRONG_AGENT"));
    assert.deepEqual(w.asked, []);
  });

  // -------------------------------------------------------------------------------------------
  // Capture grants: one per output, checked before mint, consumed after the write.

  t("add() takes a capture grant into an empty target and refuses an occupied one", async (w) => {
    const g = await w.capture({}, false);
    assert.equal(g.state, "pending");
    assert.equal(g.secret_id, "gh.pem");
    assert.deepEqual(g.uses, [{
      kind: "capture",
      allowed_origins: [GITHUB],
      workflow: "github_app",
      output: "pem",
    }]);
    assert.deepEqual(await w.store.get(g.id), g);
    assert.deepEqual(w.asked, ["gh.pem"], "the target is looked at: it must be empty");
    // A capture grant never fills, so its target's holding a value would make it dead.
    await assert.rejects(
      w.capture({ secret_id: "shop.password" }),
      code("CAPTURE_TARGET_OCCUPIED"),
    );
    for (
      const bad of [
        { mode: "standing" },
        { uses: [...captureUse("pem"), { kind: "fill", allowed_origins: [GITHUB] }] },
        { uses: [{ kind: "capture", allowed_origins: [GITHUB] }] },
        { uses: [{ kind: "capture", allowed_origins: [GITHUB], workflow: "github_app" }] },
      ]
    ) {
      await assert.rejects(w.capture(bad), code("GRANT_INVALID"), JSON.stringify(bad));
    }
    assert.deepEqual((await w.store.list()).map((x) => x.id), [g.id]);
  });

  t("fill and capture paths each accept only their own kind, in both directions", async (w) => {
    const fill = await w.grant({ mode: "once" });
    const capture = await w.capture();
    w.sink.rows = [];
    // The fill path refuses a capture grant, named or searched, without revoking it.
    await assert.rejects(
      w.redeem({ grantIds: [capture.id], origin: GITHUB }),
      code("GRANT_WRONG_USE"),
    );
    await assert.rejects(
      w.redeem({ grantIds: [capture.id], origin: GITHUB, useKind: "capture" }),
      code("GRANT_WRONG_USE"),
    );
    // A search on the capture grant's origin finds no fill grant there (the fill grant came
    // closest), and leaves the capture grant as it was.
    await assert.rejects(w.redeem({ origin: GITHUB }), code("GRANT_WRONG_ORIGIN"));
    // The capture path refuses a fill grant, check and consumption alike.
    await assert.rejects(
      w.check([{ output: "pem", grantId: fill.id }], { origin: SHOP }),
      code("GRANT_WRONG_USE"),
    );
    await assert.rejects(w.consume(fill.id, { origin: SHOP }), code("GRANT_WRONG_USE"));
    assert.deepEqual(await w.store.get(fill.id), fill, "the fill grant is untouched");
    assert.deepEqual(await w.store.get(capture.id), capture, "the capture grant is untouched");
    assert.deepEqual(w.sink.rows.map((r) => [r.kind, r.decision, r.reason, r.rule]), [
      ["grant_redeem", "deny", "GRANT_WRONG_USE", capture.id],
      ["grant_redeem", "deny", "GRANT_WRONG_USE", capture.id],
      ["grant_redeem", "deny", "GRANT_WRONG_ORIGIN", fill.id],
      ["grant_capture_check", "deny", "GRANT_WRONG_USE", fill.id],
      ["grant_capture", "deny", "GRANT_WRONG_USE", fill.id],
    ]);
    // Both still work on their own path.
    assert.equal((await w.redeem({ grantIds: [fill.id] })).length, 1);
    assert.equal((await w.check([{ output: "pem", grantId: capture.id }])).length, 1);
  });

  t(
    "checkCapture() passes every output, names each target and writes nothing but allow rows",
    async (w) => {
      const pem = await w.capture();
      const secret = await w.capture({ secret_id: "gh.secret", uses: captureUse("client_secret") });
      const hook = await w.capture({ secret_id: "gh.hook", uses: captureUse("webhook_secret") });
      const before = await w.store.list();
      w.sink.rows = [];
      w.asked.length = 0;
      const targets = await w.check([
        { output: "pem", grantId: pem.id },
        { output: "client_secret", grantId: secret.id },
        { output: "webhook_secret", grantId: hook.id },
      ]);
      assert.deepEqual(targets, [
        { output: "pem", grantId: pem.id, secretId: "gh.pem" },
        { output: "client_secret", grantId: secret.id, secretId: "gh.secret" },
        { output: "webhook_secret", grantId: hook.id, secretId: "gh.hook" },
      ]);
      assert.deepEqual(w.asked.sort(), ["gh.hook", "gh.pem", "gh.secret"]);
      assert.deepEqual(await w.store.list(), before, "a check changes no grant");
      assert.deepEqual(
        w.sink.rows,
        [pem, secret, hook].map((g, i) => ({
          session: "s-1",
          agent: "ci-bot",
          kind: "grant_capture_check",
          source: "action",
          origin: GITHUB,
          method: `capture:github_app/${["pem", "client_secret", "webhook_secret"][i]}`,
          decision: "allow",
          reason: "CAPTURE_CHECKED",
          module: null,
          rule: g.id,
        })),
      );
      // A check binds nothing: it can be run again.
      assert.equal((await w.check([{ output: "pem", grantId: pem.id }])).length, 1);
    },
  );

  t(
    "checkCapture() refuses each failed check with its own code, in check order, writing nothing",
    async (w) => {
      const g = await w.capture({ expires: "1h" });
      const pending = await w.capture({ secret_id: "gh.p2" }, false);
      const revoked = await w.capture({ secret_id: "gh.p3" });
      await w.store.revoke(revoked.id);
      const other = await w.capture({ secret_id: "gh.p4", agent: "other-bot" });
      const pem = (grantId: string) => [{ output: "pem", grantId }];
      const cases: [string, () => Promise<unknown>][] = [
        ["GRANT_NOT_FOUND", () => w.check(pem("g_aaaaaaaaaaaaaaaa"))],
        ["GRANT_NOT_FOUND", () => w.check(pem("../etc"))],
        ["GRANT_WRONG_AGENT", () => w.check(pem(other.id))],
        ["GRANT_WRONG_AGENT", () => w.check(pem(g.id), { agent: "other-bot" })],
        ["GRANT_WRONG_AGENT", () => w.check(pem(g.id), { agent: null })],
        ["GRANT_REVOKED", () => w.check(pem(revoked.id))],
        ["GRANT_PENDING", () => w.check(pem(pending.id))],
        ["GRANT_WRONG_WORKFLOW", () => w.check(pem(g.id), { workflow: "linear_oauth_app" })],
        ["GRANT_WRONG_OUTPUT", () => w.check([{ output: "client_secret", grantId: g.id }])],
        ["GRANT_INVALID", () => w.check([])],
        ["GRANT_INVALID", () => w.check(pem(g.id), { workflow: "GitHub App" })],
        [
          "GRANT_INVALID",
          () => w.check([{ output: "pem", grantId: g.id }, { output: "pem", grantId: pending.id }]),
        ],
        [
          "GRANT_INVALID",
          () => w.check([{ output: "pem", grantId: g.id }, { output: "key", grantId: g.id }]),
        ],
      ];
      for (
        const origin of [
          "https://github.com.evil.test",
          "http://github.com",
          "https://github.com:8443",
          "https://api.github.com",
          "https://github.com.",
          "null",
          "",
        ]
      ) {
        cases.push(["GRANT_WRONG_ORIGIN", () => w.check(pem(g.id), { origin })]);
      }
      for (const [expected, p] of cases) {
        await assert.rejects(p, code(expected), expected);
      }
      // The message names the output and the grant; no value is involved anywhere.
      await assert.rejects(
        w.check([{ output: "client_secret", grantId: g.id }]),
        (err: unknown) =>
          err instanceof GrantError &&
          err.message ===
            `output client_secret: the grant is for another output (${g.id}); nothing was written`,
      );
      // An occupied target, checked last.
      w.vault.add("gh.pem");
      await assert.rejects(w.check(pem(g.id)), code("CAPTURE_TARGET_OCCUPIED"));
      w.vault.delete("gh.pem");
      // Expired.
      w.advance(3_600_000);
      await assert.rejects(w.check(pem(g.id)), code("GRANT_EXPIRED"));
      const g2 = (await w.store.get(g.id))!;
      assert.equal(g2.redemptions, 0);
      assert.equal(g2.used_at, null);
      const denied = w.sink.rows.filter((r) => r.kind === "grant_capture_check");
      assert.ok(denied.every((r) => r.decision === "deny"), "no allow row on a refusal");
      assert.ok(denied.every((r) => r.rule === null || /^g_[a-z2-7]{16}$/.test(r.rule)));
      assert.ok(!denied.some((r) => r.rule === "../etc"), "junk ids are not audited");
    },
  );

  t(
    "checkCapture() with one of three grants expired, mismatched or occupied refuses all",
    async (w) => {
      const pem = await w.capture();
      const secret = await w.capture({
        secret_id: "gh.secret",
        uses: captureUse("client_secret"),
        expires: "1h",
      });
      const hook = await w.capture({ secret_id: "gh.hook", uses: captureUse("webhook_secret") });
      const outputs = [
        { output: "pem", grantId: pem.id },
        { output: "client_secret", grantId: secret.id },
        { output: "webhook_secret", grantId: hook.id },
      ];
      w.vault.add("gh.hook");
      w.sink.rows = [];
      await assert.rejects(w.check(outputs), code("CAPTURE_TARGET_OCCUPIED"));
      assert.deepEqual(w.sink.rows.map((r) => [r.decision, r.reason, r.rule]), [
        ["deny", "CAPTURE_TARGET_OCCUPIED", hook.id],
      ]);
      w.vault.delete("gh.hook");
      w.advance(3_600_000);
      w.sink.rows = [];
      await assert.rejects(
        w.check(outputs),
        (err: unknown) => code("GRANT_EXPIRED")(err) && /output client_secret/.test(String(err)),
      );
      assert.deepEqual(w.sink.rows.map((r) => [r.decision, r.reason, r.rule]), [
        ["deny", "GRANT_EXPIRED", secret.id],
      ]);
      // Two outputs into one target: both refused.
      const twin = await w.capture({ uses: captureUse("client_secret") });
      await assert.rejects(
        w.check([{ output: "pem", grantId: pem.id }, {
          output: "client_secret",
          grantId: twin.id,
        }]),
        code("CAPTURE_TARGET_DUPLICATE"),
      );
      for (const g of [pem, secret, hook, twin]) {
        assert.equal((await w.store.get(g.id))!.redemptions, 0);
      }
    },
  );

  t("consumeCapture() marks the grant used once, audited without values", async (w) => {
    const g = await w.capture({}, false);
    await assert.rejects(w.consume(g.id), code("GRANT_PENDING"));
    await w.store.approve(g.id);
    await w.check([{ output: "pem", grantId: g.id }]);
    // The runtime writes the value (the target now holds it), then consumes the grant.
    w.vault.add("gh.pem");
    w.advance(1_000);
    w.sink.rows = [];
    await assert.rejects(w.consume(g.id, { output: "client_secret" }), code("GRANT_WRONG_OUTPUT"));
    await assert.rejects(w.consume(g.id, { workflow: "x_app" }), code("GRANT_WRONG_WORKFLOW"));
    await assert.rejects(w.consume(g.id, { origin: SHOP }), code("GRANT_WRONG_ORIGIN"));
    await assert.rejects(w.consume(g.id, { agent: "other-bot" }), code("GRANT_WRONG_AGENT"));
    assert.equal((await w.store.get(g.id))!.redemptions, 0);
    const used = await w.consume(g.id, { origin: `${GITHUB}/apps/ci?code=c&state=s` });
    assert.equal(used.state, "used");
    assert.equal(used.redemptions, 1);
    assert.equal(used.used_at, "2026-06-01T12:00:01.000Z");
    assert.deepEqual(await w.store.get(g.id), used);
    assert.deepEqual(w.sink.rows.at(-1), {
      session: "s-1",
      agent: "ci-bot",
      kind: "grant_capture",
      source: "action",
      origin: GITHUB,
      method: "capture:github_app/pem",
      decision: "allow",
      reason: "GRANT_CAPTURED",
      module: null,
      rule: g.id,
    });
    await assert.rejects(w.consume(g.id), code("GRANT_USED"));
    await assert.rejects(w.check([{ output: "pem", grantId: g.id }]), code("GRANT_USED"));
    assert.equal((await w.store.get(g.id))!.redemptions, 1);
    await assert.rejects(w.consume("g_aaaaaaaaaaaaaaaa"), code("GRANT_NOT_FOUND"));
    // Removing the captured value revokes its (used) grant like any other.
    assert.equal(await w.store.revokeForSecret("gh.pem"), 1);
    assert.equal((await w.store.get(g.id))!.state, "revoked");
  });

  t("consumeCapture() refuses a revoked or expired grant and leaves it unconsumed", async (w) => {
    const revoked = await w.capture();
    await w.store.revoke(revoked.id);
    await assert.rejects(w.consume(revoked.id), code("GRANT_REVOKED"));
    const late = await w.capture({ secret_id: "gh.late", expires: "1m" });
    w.advance(60_000);
    await assert.rejects(w.consume(late.id), code("GRANT_EXPIRED"));
    assert.equal((await w.store.get(late.id))!.redemptions, 0);
    assert.equal((await w.store.get(revoked.id))!.redemptions, 0);
  });
}

/** A run of every operation, its grants and rows with ids numbered in order of appearance. */
async function scenario(adapter: Adapter): Promise<unknown> {
  await using w = await world(adapter);
  const seen: unknown[] = [];
  const outcome = async (p: Promise<unknown>) => {
    try {
      seen.push(await p);
    } catch (err) {
      seen.push(err instanceof GrantError ? [err.code, err.message] : String(err));
    }
  };
  const once = await w.grant({ mode: "once" }, false);
  const session = await w.grant({ mode: "session", secret_id: "shop.user" });
  const standing = await w.grant({ expires: "1h" });
  const pem = await w.capture({ expires: "1h" });
  const key = await w.capture({ secret_id: "gh.key", uses: captureUse("client_secret") });
  await outcome(w.redeem({ grantIds: [once.id] }));
  await outcome(w.store.approve(once.id, { by: "console" }));
  await outcome(w.store.approve(once.id));
  await outcome(w.redeem({ grantIds: [once.id, session.id], sessionId: "s-a" }));
  await outcome(w.redeem({ grantIds: [once.id], sessionId: "s-b" }));
  await outcome(w.redeem({ grantIds: [session.id], sessionId: "s-b" }));
  await outcome(w.redeem({ useKind: "capture", origin: "https://b.test/x" }));
  await outcome(w.redeem({ grantIds: [pem.id] }));
  await outcome(w.redeem({ grantIds: ["junk", standing.id] }));
  await outcome(w.check([{ output: "pem", grantId: standing.id }]));
  await outcome(w.check([{ output: "client_secret", grantId: pem.id }]));
  await outcome(w.check([{ output: "pem", grantId: pem.id }], { workflow: "linear_oauth_app" }));
  await outcome(w.check([{ output: "pem", grantId: pem.id }], { origin: "https://b.test" }));
  await outcome(w.check([
    { output: "pem", grantId: pem.id },
    { output: "client_secret", grantId: key.id },
  ]));
  w.vault.add("gh.key");
  await outcome(w.check([
    { output: "pem", grantId: pem.id },
    { output: "client_secret", grantId: key.id },
  ]));
  await outcome(w.consume(key.id, { output: "client_secret" }));
  await outcome(w.consume(key.id, { output: "client_secret" }));
  await outcome(w.consume(standing.id));
  w.advance(3_600_000);
  await outcome(w.check([{ output: "pem", grantId: pem.id }]));
  await outcome(w.consume(pem.id));
  await outcome(w.redeem({ grantIds: [standing.id] }));
  await outcome(w.store.revoke(standing.id, { by: "api" }));
  await outcome(w.store.revoke(standing.id));
  w.vault.delete("shop.user");
  await outcome(w.redeem({ grantIds: [session.id], sessionId: "s-a" }));
  await outcome(w.store.revokeForSecret("shop.password", { by: "cli" }));
  await outcome(w.store.list());
  const ids = new Map<string, string>();
  const text = JSON.stringify({ seen, rows: w.sink.rows }).replace(
    /g_[a-z2-7]{16}/g,
    (id) => ids.get(id) ?? ids.set(id, `G${ids.size}`).get(id)!,
  );
  return JSON.parse(text);
}

Deno.test("Grants: the same operations give the same grants, errors and audit rows on both adapters", async () => {
  const [sqlite, postgresRun] = [await scenario(ADAPTERS[0]), await scenario(ADAPTERS[1])];
  assert.deepEqual(postgresRun, sqlite);
  assert.ok(JSON.stringify(sqlite).includes("GRANT_WRONG_SESSION"), "the scenario ran");
});

// ---------------------------------------------------------------------------------------------
// PostgreSQL only

/** A tenant of its own, a store on `db` for it, and a grant-making helper. */
async function pgTenant(db: PgDatabase = app, name?: string) {
  const tenant = name ?? `grants-${++tenants}`;
  if (!name) await addTenant(owner, tenant);
  const sink = new MemorySink();
  const store = new Grants(new PgGrantStore(db, tenant), {
    audit: sink,
    secrets: { has: () => true },
  });
  const grant = (overrides: Record<string, unknown> = {}, approve = true) =>
    store.add({
      secret_id: "shop.password",
      agent: "ci-bot",
      purpose: "log in",
      mode: "once",
      uses: [{ kind: "fill", allowed_origins: [SHOP] }],
      ...overrides,
    }, { approve, by: "cli" });
  return { tenant, store, sink, grant };
}

const request = (overrides: Partial<RedeemRequest> = {}): RedeemRequest => ({
  agent: "ci-bot",
  useKind: "fill",
  origin: SHOP,
  sessionId: "s-1",
  ...overrides,
});

Deno.test("PgGrantStore: two runtimes redeeming one once grant at the same time: exactly one wins, the other reads it used", async () => {
  await using db1 = await PgDatabase.open({ url: pg.appUrl });
  await using db2 = await PgDatabase.open({ url: pg.appUrl });
  const r1 = await pgTenant(db1);
  const r2 = await pgTenant(db2, r1.tenant);
  const grants = await Promise.all(Array.from({ length: 12 }, () => r1.grant()));
  const races = grants.flatMap((g) => [
    r1.store.redeem(request({ grantIds: [g.id], sessionId: "s-1" })),
    r2.store.redeem(request({ grantIds: [g.id], sessionId: "s-2" })),
  ]);
  const settled = await Promise.allSettled(races);
  for (let i = 0; i < grants.length; i++) {
    const pair = settled.slice(2 * i, 2 * i + 2);
    assert.equal(pair.filter((s) => s.status === "fulfilled").length, 1, `grant ${i}`);
    const lost = pair.find((s) => s.status === "rejected") as PromiseRejectedResult;
    assert.ok(code("GRANT_USED")(lost.reason), String(lost.reason));
    const after = (await r1.store.get(grants[i].id))!;
    assert.equal(after.redemptions, 1);
    assert.equal(after.state, "used");
  }
  const allows = [...r1.sink.rows, ...r2.sink.rows].filter((r) => r.decision === "allow");
  assert.equal(allows.filter((r) => r.kind === "grant_redeem").length, grants.length);

  // Without ids too: an agent's single once grant, searched for by both at once.
  const solo = await pgTenant(db1);
  const soloB = await pgTenant(db2, solo.tenant);
  const g = await solo.grant();
  const both = await Promise.allSettled([
    solo.store.redeem(request()),
    soloB.store.redeem(request({ sessionId: "s-2" })),
  ]);
  assert.equal(both.filter((s) => s.status === "fulfilled").length, 1);
  assert.equal((await solo.store.get(g.id))!.redemptions, 1);

  // Crossed named pairs lock in id order: neither deadlocks, both pass (standing grants).
  const x = await solo.grant({ mode: "standing" });
  const y = await solo.grant({ mode: "standing" });
  const crossed = await Promise.all(
    Array.from({ length: 10 }, (_, i) =>
      (i % 2 ? solo : soloB).store.redeem(
        request({ grantIds: i % 2 ? [x.id, y.id] : [y.id, x.id] }),
      )),
  );
  assert.equal(crossed.length, 10);
  assert.equal((await solo.store.get(x.id))!.redemptions, 10);
});

Deno.test("PgGrantStore: a session grant raced by two sessions binds to exactly one", async () => {
  await using db2 = await PgDatabase.open({ url: pg.appUrl });
  const r1 = await pgTenant();
  const r2 = await pgTenant(db2, r1.tenant);
  for (let i = 0; i < 8; i++) {
    const g = await r1.grant({ mode: "session" });
    const settled = await Promise.allSettled([
      r1.store.redeem(request({ grantIds: [g.id], sessionId: "s-a" })),
      r2.store.redeem(request({ grantIds: [g.id], sessionId: "s-b" })),
    ]);
    const won = settled.findIndex((s) => s.status === "fulfilled");
    assert.notEqual(won, -1);
    const lost = settled[1 - won] as PromiseRejectedResult;
    assert.ok(code("GRANT_WRONG_SESSION")(lost.reason), String(lost.reason));
    const after = (await r2.store.get(g.id))!;
    assert.equal(after.session_id, won === 0 ? "s-a" : "s-b");
    assert.equal(after.redemptions, 1);
  }
});

Deno.test("PgGrantStore: two runtimes consuming one capture grant at once: exactly one marks it used", async () => {
  await using db2 = await PgDatabase.open({ url: pg.appUrl });
  const tenant = `grants-${++tenants}`;
  await addTenant(owner, tenant);
  const sinks = [new MemorySink(), new MemorySink()];
  const stores = [app, db2].map((db, i) =>
    new Grants(new PgGrantStore(db, tenant), { audit: sinks[i], secrets: { has: () => false } })
  );
  const consume = (i: number, id: string) =>
    stores[i].consumeCapture(id, {
      agent: "ci-bot",
      origin: GITHUB,
      workflow: "github_app",
      output: "pem",
      sessionId: `s-${i}`,
    });
  for (let n = 0; n < 8; n++) {
    const g = await stores[0].add(captureInput({ secret_id: `gh.pem-${n}` }), { approve: true });
    const settled = await Promise.allSettled([consume(0, g.id), consume(1, g.id)]);
    assert.equal(settled.filter((s) => s.status === "fulfilled").length, 1, `grant ${n}`);
    const lost = settled.find((s) => s.status === "rejected") as PromiseRejectedResult;
    assert.ok(code("GRANT_USED")(lost.reason), String(lost.reason));
    const after = (await stores[1].get(g.id))!;
    assert.equal(after.redemptions, 1);
    assert.equal(after.state, "used");
  }
  const allows = sinks.flatMap((s) => s.rows).filter((r) => r.kind === "grant_capture");
  assert.equal(allows.filter((r) => r.decision === "allow").length, 8);
});

Deno.test("PgGrantStore: the table refuses a capture grant that also fills or is not once", async () => {
  const { tenant } = await pgTenant();
  const sql = postgres(pg.appUrl, { max: 1, onnotice: () => {} });
  const capture =
    `{"kind":"capture","allowed_origins":["${GITHUB}"],"workflow":"github_app","output":"pem"}`;
  try {
    await assertRefused(sql, tenant, [
      `INSERT INTO grants (tenant_id, id, secret_id, agent, purpose, mode, uses, expires_at,
        created_at, created_by) VALUES ('${tenant}', 'g_aaaaaaaaaaaaaaad', 'gh.pem', 'ci-bot',
        'p', 'standing', '[${capture}]', now() + interval '1h', now(), 'x')`,
      `INSERT INTO grants (tenant_id, id, secret_id, agent, purpose, mode, uses, expires_at,
        created_at, created_by) VALUES ('${tenant}', 'g_aaaaaaaaaaaaaaae', 'gh.pem', 'ci-bot',
        'p', 'once', '[${capture}, {"kind":"fill","allowed_origins":["${GITHUB}"]}]',
        now() + interval '1h', now(), 'x')`,
    ], /violates check constraint/);
  } finally {
    await sql.end();
  }
});

Deno.test("PgGrantStore: tenants are walled: another tenant sees, approves, revokes and redeems nothing", async () => {
  const a = await pgTenant();
  const b = await pgTenant();
  const live = await a.grant({ mode: "standing" });
  const pending = await a.grant({}, false);
  assert.equal(await b.store.get(live.id), undefined);
  assert.deepEqual(await b.store.list(), []);
  assert.deepEqual(await b.store.list({ agent: "ci-bot" }), []);
  await assert.rejects(b.store.redeem(request({ grantIds: [live.id] })), code("GRANT_NOT_FOUND"));
  await assert.rejects(b.store.redeem(request()), code("GRANT_NOT_FOUND"));
  await assert.rejects(b.store.approve(pending.id), code("GRANT_NOT_FOUND"));
  await assert.rejects(b.store.revoke(live.id), code("GRANT_NOT_FOUND"));
  assert.equal(await b.store.revokeForSecret("shop.password"), 0);
  assert.equal((await a.store.get(live.id))!.state, "active");
  assert.equal((await a.store.get(live.id))!.redemptions, 0);
  assert.equal((await a.store.get(pending.id))!.state, "pending");
  // The same agent in b has its own grants.
  const mine = await b.grant({ mode: "standing" });
  assert.deepEqual((await b.store.redeem(request())).map((g) => g.id), [mine.id]);
  assert.deepEqual((await a.store.list()).map((g) => g.id).sort(), [live.id, pending.id].sort());
});

Deno.test("PgGrantStore: a database failure is GRANTS_UNAVAILABLE", async () => {
  const db = await PgDatabase.open({ url: pg.appUrl });
  const { store } = await pgTenant(db);
  await db[Symbol.asyncDispose]();
  await assert.rejects(store.list(), code("GRANTS_UNAVAILABLE"));
  await assert.rejects(store.redeem(request()), code("GRANTS_UNAVAILABLE"));
  const unknown = new Grants(new PgGrantStore(app, "no-such-tenant"), {
    audit: new MemorySink(),
    secrets: { has: () => true },
  });
  await assert.rejects(
    unknown.add({
      secret_id: "shop.password",
      agent: "ci-bot",
      purpose: "p",
      mode: "once",
      uses: [{ kind: "fill", allowed_origins: [SHOP] }],
    }),
    code("GRANTS_UNAVAILABLE"),
  );
});

Deno.test("PgGrantStore: the runtime's role with any SQL cannot revive, widen, rebind, unuse or remove a grant", async () => {
  const victim = await pgTenant();
  const mine = await pgTenant();
  const revoked = await mine.grant({ mode: "standing" });
  await mine.store.revoke(revoked.id);
  const used = await mine.grant();
  await mine.store.redeem(request({ grantIds: [used.id] }));
  const bound = await mine.grant({ mode: "session" });
  await mine.store.redeem(request({ grantIds: [bound.id], sessionId: "s-a" }));
  const pending = await mine.grant({ mode: "standing" }, false);
  const live = await mine.grant({ mode: "standing" });
  const theirs = await victim.grant({ mode: "standing" });
  await victim.store.revoke(theirs.id);
  const before = await mine.store.list();

  const refused =
    /GRANT_FINAL|permission denied|violates check constraint|row-level security|must be owner|duplicate key/;
  const evil = `'[{"kind":"fill","allowed_origins":["https://evil.test"]}]'::jsonb`;
  const sql = postgres(pg.appUrl, { max: 1, onnotice: () => {} });
  try {
    await assertRefused(sql, mine.tenant, [
      // Revive a revoked grant, or touch it at all.
      `UPDATE grants SET revoked_at = NULL, revoked_by = NULL, revoke_reason = NULL
        WHERE id = '${revoked.id}'`,
      `UPDATE grants SET revoke_reason = 'oops' WHERE id = '${revoked.id}'`,
      `UPDATE grants SET redemptions = redemptions + 1, used_at = now(), last_redeemed_at = now()
        WHERE id = '${revoked.id}'`,
      // Widen origins or change what the grant is.
      `UPDATE grants SET uses = ${evil} WHERE id = '${live.id}'`,
      `UPDATE grants SET secret_id = 'shop.user' WHERE id = '${live.id}'`,
      `UPDATE grants SET agent = 'mallory' WHERE id = '${live.id}'`,
      `UPDATE grants SET mode = 'standing' WHERE id = '${used.id}'`,
      `UPDATE grants SET expires_at = 'infinity' WHERE id = '${live.id}'`,
      `UPDATE grants SET tenant_id = '${victim.tenant}' WHERE id = '${live.id}'`,
      // Unuse a used once grant, or redeem it again.
      `UPDATE grants SET used_at = NULL, redemptions = 0 WHERE id = '${used.id}'`,
      `UPDATE grants SET redemptions = redemptions + 1, last_redeemed_at = now()
        WHERE id = '${used.id}'`,
      // Rebind or unbind a session grant; count backwards or by leaps.
      `UPDATE grants SET session_id = 'mallory' WHERE id = '${bound.id}'`,
      `UPDATE grants SET session_id = NULL WHERE id = '${bound.id}'`,
      `UPDATE grants SET redemptions = 0 WHERE id = '${bound.id}'`,
      `UPDATE grants SET redemptions = redemptions + 5, last_redeemed_at = now()
        WHERE id = '${live.id}'`,
      `UPDATE grants SET session_id = 'x' WHERE id = '${live.id}'`,
      // Redeem a pending grant; unapprove or re-date an approval.
      `UPDATE grants SET redemptions = 1, used_at = now(), last_redeemed_at = now()
        WHERE id = '${pending.id}'`,
      `UPDATE grants SET approved_at = NULL, approved_by = NULL WHERE id = '${live.id}'`,
      `UPDATE grants SET approved_by = 'mallory' WHERE id = '${live.id}'`,
      // Insert a grant born used, bound, counted or revoked, or overwrite one by conflict.
      `INSERT INTO grants (tenant_id, id, secret_id, agent, purpose, mode, uses, expires_at,
        created_at, created_by, redemptions) VALUES ('${mine.tenant}', 'g_aaaaaaaaaaaaaaaa',
        's', 'a', 'p', 'once', '[]', now() + interval '1h', now(), 'x', 0)`,
      `INSERT INTO grants (tenant_id, id, secret_id, agent, purpose, mode, uses, expires_at,
        created_at, created_by, session_id) VALUES ('${mine.tenant}', 'g_aaaaaaaaaaaaaaab',
        's', 'a', 'p', 'session', '[]', now() + interval '1h', now(), 'x', 's-x')`,
      `INSERT INTO grants (tenant_id, id, secret_id, agent, purpose, mode, uses, expires_at,
        created_at, created_by) VALUES ('${mine.tenant}', '${revoked.id}', 'shop.password',
        'ci-bot', 'p', 'standing', ${evil}, now() + interval '1h', now(), 'x')
        ON CONFLICT (tenant_id, id) DO UPDATE SET uses = excluded.uses`,
      `INSERT INTO grants (tenant_id, id, secret_id, agent, purpose, mode, uses, expires_at,
        created_at, created_by) VALUES ('${mine.tenant}', '${revoked.id}', 'shop.password',
        'ci-bot', 'p', 'standing', '[]', now() + interval '1h', now(), 'x')
        ON CONFLICT (tenant_id, id) DO UPDATE SET revoked_at = NULL, revoked_by = NULL,
          revoke_reason = NULL`,
      `INSERT INTO grants (tenant_id, id, secret_id, agent, purpose, mode, uses, expires_at,
        created_at, created_by) VALUES ('${mine.tenant}', '${revoked.id}', 'shop.password',
        'ci-bot', 'p', 'standing', '[]', now() + interval '1h', now(), 'x')`,
      // Into another tenant.
      `INSERT INTO grants (tenant_id, id, secret_id, agent, purpose, mode, uses, expires_at,
        created_at, created_by, approved_at, approved_by) VALUES ('${victim.tenant}',
        'g_aaaaaaaaaaaaaaac', 'shop.password', 'ci-bot', 'p', 'standing', ${evil},
        now() + interval '1h', now(), 'x', now(), 'x')`,
      // Remove, empty, lock or unguard the table.
      `DELETE FROM grants WHERE id = '${revoked.id}'`,
      `TRUNCATE grants`,
      `LOCK TABLE grants IN ACCESS EXCLUSIVE MODE`,
      `LOCK TABLE grants IN SHARE MODE`,
      `ALTER TABLE grants DISABLE TRIGGER grants_guard`,
      `DROP TRIGGER grants_guard ON grants`,
      `ALTER TABLE grants DISABLE ROW LEVEL SECURITY`,
      `CREATE OR REPLACE FUNCTION grants_guard() RETURNS trigger LANGUAGE plpgsql AS
        $f$ BEGIN RETURN NEW; END $f$`,
    ], refused);

    // Another tenant's grants are out of reach: no rows seen, none changed.
    const [{ n }] = await sql`SELECT count(*)::int AS n FROM grants`;
    assert.equal(n, 0, "no tenant: no rows");
    await sql.begin(async (tx) => {
      await tx`SELECT set_config('app.tenant_id', ${mine.tenant}, true)`;
      const seen = await tx`SELECT id FROM grants WHERE tenant_id = ${victim.tenant}`;
      assert.equal(seen.length, 0);
      const changed = await tx`UPDATE grants SET revoked_at = NULL, revoked_by = NULL,
        revoke_reason = NULL WHERE id = ${theirs.id}`;
      assert.equal(changed.count, 0);
      const locked = await tx`SELECT id FROM grants WHERE id = ${theirs.id} FOR UPDATE`;
      assert.equal(locked.length, 0);
    });
  } finally {
    await sql.end();
  }
  assert.deepEqual(await mine.store.list(), before, "every grant of mine is as it was");
  assert.equal((await victim.store.get(theirs.id))!.state, "revoked");
  assert.deepEqual((await victim.store.get(theirs.id))!.uses, theirs.uses);
  // The honest paths still work after all that.
  await assert.rejects(
    mine.store.redeem(request({ grantIds: [revoked.id] })),
    code("GRANT_REVOKED"),
  );
  assert.equal((await mine.store.redeem(request({ grantIds: [live.id] }))).length, 1);
});

Deno.test(clusterTeardown("Grants contract", pg, app, owner));
