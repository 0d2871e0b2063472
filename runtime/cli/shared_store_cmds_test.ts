/**
 * `omotai secret` and `omotai grant` on a tenant of a real (throwaway) shared PostgreSQL
 * store, run in-process as the CLI runs them (`--database URL --tenant ID`), and once through
 * the launcher's own permissions: a tenant's secrets and grants are its own, a grant needs a
 * secret of its own tenant, `secret rm` revokes the secret's grants first, every change is in
 * the tenant's audit chain when the command reports it, the embedded store still works
 * without a database, and the URL's password is never printed.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { VaultError } from "../../vault/mod.ts";
import { OmotaiError } from "../errors.ts";
import { PgDatabase } from "../store/pg_database.ts";
import { addTenant } from "../store/pg_tenants.ts";
import { clusterTeardown, startPostgres } from "../../tests/helpers/postgres.ts";
import { runtimeCommand } from "../../tests/helpers/harness.ts";
import { grantCommand } from "./grant_cmd.ts";
import { secretCommand } from "./secret_cmd.ts";

const pg = await startPostgres();
const owner = await PgDatabase.open({ url: pg.ownerUrl }, "owner");
await owner.migrate();
await addTenant(owner, "acme");
await addTenant(owner, "globex");

const PASSWORD = decodeURIComponent(new URL(pg.ownerUrl).password);
const KEY = btoa(String.fromCharCode(...crypto.getRandomValues(new Uint8Array(32))));
const SHOP = "https://shop.test";

/** Everything any command printed, and every error it threw (the CLI prints those). */
const printed: string[] = [];

/** What one command printed, its exit code, or the error it threw. */
interface Ran {
  code?: number;
  out: string;
  err: string;
  error?: unknown;
}

/**
 * Runs `command` with the console recorded and the variables it reads set to `env` only
 * (the vault key; no OMOTAI_DATABASE_URL nor OMOTAI_DB from the caller's environment).
 */
async function cli(
  command: () => Promise<number>,
  env: Record<string, string> = { OMOTAI_VAULT_KEY: KEY },
): Promise<Ran> {
  const names = [
    "OMOTAI_VAULT_KEY",
    "OMOTAI_VAULT_PASSPHRASE",
    "OMOTAI_DATABASE_URL",
    "OMOTAI_DB",
  ];
  const saved = new Map(names.map((n) => [n, Deno.env.get(n)]));
  for (const n of names) {
    if (env[n] !== undefined) Deno.env.set(n, env[n]);
    else Deno.env.delete(n);
  }
  const { log, error } = console;
  const ran: Ran = { out: "", err: "" };
  console.log = (...args: unknown[]) => void (ran.out += args.join(" ") + "\n");
  console.error = (...args: unknown[]) => void (ran.err += args.join(" ") + "\n");
  try {
    ran.code = await command();
  } catch (err) {
    ran.error = err;
  } finally {
    console.log = log;
    console.error = error;
    for (const [n, v] of saved) {
      if (v === undefined) Deno.env.delete(n);
      else Deno.env.set(n, v);
    }
  }
  const thrown = ran.error instanceof Error
    ? `${ran.error.message}\n${ran.error.stack}\n${String(ran.error.cause ?? "")}`
    : "";
  printed.push(ran.out, ran.err, thrown);
  return ran;
}

const on = (tenant: string) => ["--database", pg.ownerUrl, "--tenant", tenant];

/** `omotai secret ARGS` on `tenant`; `value` is what stdin would give. */
const secret = (tenant: string, args: string[], value = "") =>
  cli(() => secretCommand([...args, ...on(tenant)], () => Promise.resolve(value)));

/** `omotai grant ARGS` on `tenant`. */
const grant = (tenant: string, args: string[]) => cli(() => grantCommand([...args, ...on(tenant)]));

function ok(ran: Ran): string {
  assert.equal(ran.error, undefined, String(ran.error));
  assert.equal(ran.code, 0, ran.out + ran.err);
  return ran.out;
}

/** The command threw `code` (an `OmotaiError` or a `VaultError`: the CLI prints both). */
function refused(ran: Ran, code: string): void {
  const err = ran.error;
  assert.ok(
    err instanceof OmotaiError || err instanceof VaultError,
    `expected ${code}, got ${err ?? ran.out}`,
  );
  assert.equal(err.code, code, err.message);
}

function grantId(out: string): string {
  const id = /added grant (g_[a-z2-7]{16}) /.exec(out)?.[1];
  assert.ok(id, `no grant id in ${out}`);
  return id;
}

const addArgs = (secretId: string, agent: string) => [
  "add",
  secretId,
  "--agent",
  agent,
  "--purpose",
  "log in to the shop",
  "--mode",
  "standing",
  "--fill",
  SHOP,
];

/** The tenant's grant audit rows, in chain order: kind, reason, grant id. */
async function grantRows(tenant: string): Promise<string[]> {
  const rows = await owner.tenant(
    tenant,
    (tx) =>
      tx<{ kind: string; reason: string; rule: string }[]>`SELECT kind, reason, rule
        FROM audit_events WHERE tenant_id = ${tenant} AND kind LIKE 'grant_%' ORDER BY seq`,
  );
  return rows.map((r) => `${r.kind} ${r.reason} ${r.rule}`);
}

Deno.test("secret add on acme is listed for acme and not for globex; each tenant has its own", async () => {
  const added = ok(await secret("acme", ["add", "shop.pw", "--kind", "password"], "acme-value"));
  assert.equal(added, "added secret shop.pw (password)\n");
  assert.match(
    ok(await secret("acme", ["list"])),
    /^shop\.pw {2}password {2}\(since \d{4}-.*, last used never\)$/m,
  );
  assert.equal(ok(await secret("globex", ["list"])), "no secrets\n");
  ok(await secret("globex", ["add", "globex.pw", "--kind", "password"], "globex-value"));
  const acme = ok(await secret("acme", ["list"]));
  assert.ok(!acme.includes("globex.pw"), acme);
  // An id taken on acme is refused there before a value is read, and free on globex.
  refused(await secret("acme", ["add", "shop.pw", "--kind", "password"], "again"), "SECRET_EXISTS");
  ok(await secret("globex", ["add", "shop.pw", "--kind", "generic"], "globex-shop"));
  // Another key does not open acme's vault.
  const other = btoa(String.fromCharCode(...crypto.getRandomValues(new Uint8Array(32))));
  const wrong = await cli(
    () => secretCommand(["list", ...on("acme")]),
    { OMOTAI_VAULT_KEY: other },
  );
  refused(wrong, "VAULT_KEY_MISMATCH");
  assert.match((wrong.error as Error).message, /check OMOTAI_VAULT_KEY or OMOTAI_VAULT_PASSPHRASE/);
  for (const text of printed) {
    assert.ok(!text.includes("acme-value") && !text.includes("globex-value"), "a value printed");
  }
});

Deno.test("grant add, approve and rm on acme: listed for acme only, each change audited in acme's chain before it is reported", async () => {
  const pending = ok(await grant("acme", addArgs("shop.pw", "ci-bot")));
  const id = grantId(pending);
  assert.match(
    pending,
    new RegExp(`^added grant ${id} \\(pending\\): shop\\.pw for ci-bot, standing, until \\d{4}-`),
  );
  assert.match(pending, new RegExp(`approve it with: omotai grant approve ${id}\\n$`));
  assert.deepEqual(await grantRows("acme"), [`grant_add GRANT_ADDED ${id}`]);

  assert.match(ok(await grant("acme", ["approve", id])), new RegExp(`^approved grant ${id} `));
  assert.deepEqual((await grantRows("acme")).at(-1), `grant_approve GRANT_APPROVED ${id}`);
  refused(await grant("acme", ["approve", id]), "GRANT_NOT_PENDING");
  assert.match(
    ok(await grant("acme", ["list"])),
    new RegExp(
      `^${id}  active  shop\\.pw  agent ci-bot  standing  until \\S+  fill ${SHOP}  ` +
        `redeemed 0x  "log in to the shop"$`,
      "m",
    ),
  );
  // globex sees none of it, and cannot approve or revoke acme's grant.
  assert.equal(ok(await grant("globex", ["list"])), "no grants\n");
  refused(await grant("globex", ["approve", id]), "GRANT_NOT_FOUND");
  refused(await grant("globex", ["rm", id]), "GRANT_NOT_FOUND");

  const helper = grantId(ok(await grant("acme", [...addArgs("shop.pw", "helper"), "--approve"])));
  assert.deepEqual((await grantRows("acme")).slice(-2), [
    `grant_add GRANT_ADDED ${helper}`,
    `grant_approve GRANT_APPROVED ${helper}`,
  ]);
  assert.equal(ok(await grant("acme", ["rm", helper])), `revoked grant ${helper}\n`);
  assert.deepEqual((await grantRows("acme")).at(-1), `grant_revoke GRANT_REVOKED ${helper}`);
  assert.match(ok(await grant("acme", ["list"])), new RegExp(`^${helper}  revoked  `, "m"));
  assert.deepEqual(await grantRows("globex"), []);
});

Deno.test("a grant for a secret only globex holds is refused SECRET_NOT_FOUND on acme, and nothing is kept", async () => {
  const before = await grantRows("acme");
  refused(await grant("acme", addArgs("globex.pw", "ci-bot")), "SECRET_NOT_FOUND");
  assert.deepEqual(await grantRows("acme"), before);
  assert.ok(!ok(await grant("acme", ["list"])).includes("globex.pw"));
  // The same secret is grantable on its own tenant.
  grantId(ok(await grant("globex", addArgs("globex.pw", "ci-bot"))));
});

Deno.test("secret rm on acme revokes the secret's grants first, audited as SECRET_REMOVED; globex's are untouched", async () => {
  const live = grantId(ok(await grant("acme", [...addArgs("shop.pw", "third"), "--approve"])));
  const globexGrant = grantId(ok(await grant("globex", addArgs("shop.pw", "ci-bot"))));
  const liveBefore = (ok(await grant("acme", ["list"])).match(/ (active|pending) /g) ?? [])
    .length;
  assert.equal(liveBefore, 2, "ci-bot's active grant and third's");
  const rm = ok(await secret("acme", ["rm", "shop.pw"]));
  assert.equal(rm, "removed secret shop.pw and revoked 2 grants\n");
  const list = ok(await grant("acme", ["list"]));
  assert.ok(!/ (active|pending) /.test(list), list);
  assert.match(list, new RegExp(`^${live}  revoked  `, "m"));
  assert.equal((await grantRows("acme")).filter((r) => r.includes("SECRET_REMOVED")).length, 2);
  assert.ok(!ok(await secret("acme", ["list"])).includes("shop.pw"));
  // Gone: a new grant for it is refused; removing it again says so.
  refused(await grant("acme", addArgs("shop.pw", "ci-bot")), "SECRET_NOT_FOUND");
  const again = await secret("acme", ["rm", "shop.pw"]);
  assert.equal(again.code, 1);
  assert.equal(again.out, "no secret shop.pw\n");
  // globex's secret of the same id and its grant stand.
  assert.match(ok(await secret("globex", ["list"])), /^shop\.pw {2}generic /m);
  assert.match(ok(await grant("globex", ["list"])), new RegExp(`^${globexGrant}  pending  `, "m"));
});

Deno.test("the embedded store still works without --database; --tenant without a database is BAD_TENANT", async () => {
  const dir = await Deno.makeTempDir({ prefix: "omotai-cli-embedded-" });
  try {
    const local = ["--data-dir", dir];
    const read = () => Promise.resolve("embedded-value");
    assert.equal(
      ok(await cli(() => secretCommand(["add", "shop.pw", "--kind", "password", ...local], read))),
      "added secret shop.pw (password)\n",
    );
    assert.ok(Deno.statSync(join(dir, "omotai.db")).isFile);
    assert.match(ok(await cli(() => secretCommand(["list", ...local]))), /^shop\.pw {2}password /m);
    const id = grantId(
      ok(await cli(() => grantCommand([...addArgs("shop.pw", "ci-bot"), ...local]))),
    );
    assert.match(ok(await cli(() => grantCommand(["approve", id, ...local]))), /approved grant/);
    refused(
      await cli(() => grantCommand([...addArgs("globex.pw", "ci-bot"), ...local])),
      "SECRET_NOT_FOUND",
    );
    assert.match(
      ok(await cli(() => grantCommand(["list", ...local]))),
      new RegExp(`^${id}  active  shop\\.pw `, "m"),
    );
    assert.equal(
      ok(await cli(() => secretCommand(["rm", "shop.pw", ...local]))),
      "removed secret shop.pw and revoked 1 grant\n",
    );
    assert.match(
      ok(await cli(() => grantCommand(["list", ...local]))),
      new RegExp(`^${id}  revoked  `, "m"),
    );
    // `--tenant default` is the embedded store's one tenant; any other is refused.
    assert.equal(
      ok(await cli(() => secretCommand(["list", ...local, "--tenant", "default"]))),
      "no secrets\n",
    );
    refused(await cli(() => secretCommand(["list", ...local, "--tenant", "acme"])), "BAD_TENANT");
    refused(await cli(() => grantCommand(["list", ...local, "--tenant", "acme"])), "BAD_TENANT");
    refused(
      await cli(() =>
        secretCommand(["add", "x", "--kind", "generic", ...local, "--tenant", "acme"])
      ),
      "BAD_TENANT",
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("OMOTAI_DATABASE_URL names the shared store as --database does", async () => {
  const env = { OMOTAI_VAULT_KEY: KEY, OMOTAI_DATABASE_URL: pg.ownerUrl };
  assert.match(
    ok(await cli(() => secretCommand(["list", "--tenant", "globex"]), env)),
    /^globex\.pw {2}password /m,
  );
  assert.match(
    ok(await cli(() => grantCommand(["list", "--tenant", "globex"]), env)),
    / {2}pending {2}globex\.pw {2}agent ci-bot /,
  );
});

Deno.test("through the launcher: the URL leaves argv, the runtime reaches the database with the permissions it is given", async () => {
  const dir = await Deno.makeTempDir({ prefix: "omotai-cli-launched-" });
  try {
    const run = async (args: string[], stdin: string) => {
      const command = runtimeCommand([...args, "--data-dir", dir, ...on("acme")]);
      assert.ok(!command.args.some((a) => a.includes(PASSWORD)), "the password is not in argv");
      const child = new Deno.Command(Deno.execPath(), {
        args: command.args,
        env: { ...command.env, OMOTAI_VAULT_KEY: KEY },
        stdin: "piped",
        stdout: "piped",
        stderr: "piped",
      }).spawn();
      const writer = child.stdin.getWriter();
      await writer.write(new TextEncoder().encode(stdin));
      await writer.close();
      const r = await child.output();
      const d = new TextDecoder();
      const ran = { code: r.code, out: d.decode(r.stdout), err: d.decode(r.stderr) };
      printed.push(ran.out, ran.err);
      assert.equal(ran.code, 0, ran.err);
      return ran.out;
    };
    assert.equal(
      await run(["secret", "add", "launched.pw", "--kind", "password"], "launched-value\n"),
      "added secret launched.pw (password)\n",
    );
    const id = grantId(await run(["grant", ...addArgs("launched.pw", "ci-bot"), "--approve"], ""));
    assert.match(
      await run(["grant", "list"], ""),
      new RegExp(`^${id}  active  launched\\.pw `, "m"),
    );
    assert.equal(
      await run(["secret", "rm", "launched.pw"], ""),
      "removed secret launched.pw and revoked 1 grant\n",
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a refused login names no password either", async () => {
  const bad = new URL(pg.ownerUrl);
  bad.password = "not-the-password-" + crypto.randomUUID();
  const ran = await cli(() => grantCommand(["list", "--database", bad.href, "--tenant", "acme"]));
  assert.ok(ran.error instanceof Error, "a wrong password is refused");
  const text = `${ran.error.message}\n${ran.error.stack}`;
  assert.ok(!text.includes(bad.password), text);
});

Deno.test("the URL's password never appears in anything a command printed or threw", () => {
  assert.ok(printed.length > 50, `only ${printed.length} outputs`);
  for (const text of printed) assert.ok(!text.includes(PASSWORD), text);
});

Deno.test(clusterTeardown("shared_store_cmds", pg, owner));
