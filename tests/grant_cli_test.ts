import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import {
  type CliRun,
  randomVaultKey,
  runOmotai,
  runRuntime,
  runRuntimeBatch,
  stageSecret,
  withRunsDir,
} from "./helpers/omotai_cli.ts";

// The first grant call of each test goes through the `omotai` launcher; the rest run the
// runtime's own process as the launcher starts it (runRuntime), which prints and exits alike,
// or, in order, the runtime's main() for each in one such process (runRuntimeBatch).

const SHOP = "http://127.0.0.1:8081";

function idOf(run: CliRun): string {
  const id = /added grant (g_[a-z2-7]{16}) /.exec(run.stdout)?.[1];
  assert.ok(id, `no grant id in ${run.stdout}${run.stderr}`);
  return id;
}

Deno.test("omotai grant add|approve|rm|list: pending until approved, no vault key needed, every change audited", async () => {
  await withRunsDir("test-grant-cli", async (dir) => {
    const key = randomVaultKey();
    const value = `pw-${crypto.randomUUID()}`;
    await stageSecret(dir, key, "shop.password", "password", value);
    const outputs: string[] = [];
    // No OMOTAI_VAULT_KEY: grants look only at the secret's id.
    const run = async (args: string[], launcher = false) => {
      const res = await (launcher ? runOmotai : runRuntime)(
        ["grant", ...args, "--data-dir", dir],
        {},
      );
      outputs.push(res.stdout, res.stderr);
      return res;
    };
    const batch = async (lines: string[][]) => {
      const runs = await runRuntimeBatch(
        lines.map((args) => ["grant", ...args, "--data-dir", dir]),
      );
      for (const res of runs) outputs.push(res.stdout, res.stderr);
      return runs;
    };

    const pending = await run([
      "add",
      "shop.password",
      "--agent",
      "ci-bot",
      "--purpose",
      "log in to the shop",
      "--mode",
      "once",
      "--expires",
      "2h",
      "--fill",
      `${SHOP},HTTPS://Shop.TEST:443`,
    ], true);
    assert.equal(pending.code, 0, pending.stderr);
    const id = idOf(pending);
    assert.match(
      pending.stdout,
      new RegExp(
        `^added grant ${id} \\(pending\\): shop\\.password for ci-bot, once, until \\d{4}-`,
        "m",
      ),
    );
    assert.match(pending.stdout, new RegExp(`approve it with: omotai grant approve ${id}`));

    // The rest of the grant calls, in order, in one process (runRuntimeBatch): each line as
    // the runtime's own process runs it, its own output and exit code.
    const [list, approve, twice, standing, revoke, again, unknown, after] = await batch([
      ["list"],
      ["approve", id],
      ["approve", id],
      [
        "add",
        "shop.password",
        "--agent",
        "helper",
        "--purpose",
        "stay signed in",
        "--mode",
        "standing",
        "--fill",
        SHOP,
        "--approve",
      ],
      ["rm", id],
      ["rm", id],
      ["approve", "g_aaaaaaaaaaaaaaaa"],
      ["list"],
    ]);
    assert.equal(list.code, 0, list.stderr);
    assert.match(
      list.stdout,
      new RegExp(
        `^${id}  pending  shop\\.password  agent ci-bot  once  until \\S+  fill ${SHOP},https://shop\\.test  redeemed 0x  "log in to the shop"$`,
        "m",
      ),
    );

    assert.equal(approve.code, 0, approve.stderr);
    assert.match(approve.stdout, new RegExp(`approved grant ${id}`));
    assert.equal(twice.code, 1);
    assert.match(twice.stderr, /omotai: GRANT_NOT_PENDING: /);
    assert.equal(standing.code, 0, standing.stderr);
    const standingId = idOf(standing);
    assert.match(standing.stdout, /\(active\)/);
    assert.doesNotMatch(standing.stdout, /approve it with/);

    assert.equal(revoke.code, 0, revoke.stderr);
    assert.match(revoke.stdout, new RegExp(`revoked grant ${id}`));
    assert.equal(again.code, 1);
    assert.match(again.stderr, /omotai: GRANT_REVOKED: /);
    assert.equal(unknown.code, 1);
    assert.match(unknown.stderr, /omotai: GRANT_NOT_FOUND: /);

    assert.match(after.stdout, new RegExp(`^${id}  revoked `, "m"));
    assert.match(after.stdout, new RegExp(`^${standingId}  active .* fill ${SHOP} `, "m"));

    // Deleting the secret revokes its remaining grants.
    const rm = await runRuntime(["secret", "rm", "shop.password", "--data-dir", dir], {
      OMOTAI_VAULT_KEY: key,
    });
    assert.equal(rm.code, 0, rm.stderr);
    assert.match(rm.stdout, /removed secret shop\.password and revoked 1 grant$/m);
    const db = new DatabaseSync(`${dir}/omotai.db`, { readOnly: true });
    try {
      const rows = db.prepare(
        "SELECT kind, source, decision, reason, module, rule, origin FROM audit WHERE kind LIKE 'grant_%' ORDER BY seq",
      ).all() as Record<string, string | null>[];
      assert.deepEqual(rows.map((r) => [r.kind, r.reason, r.module, r.rule]), [
        ["grant_add", "GRANT_ADDED", "cli", id],
        ["grant_approve", "GRANT_APPROVED", "cli", id],
        ["grant_add", "GRANT_ADDED", "cli", standingId],
        ["grant_approve", "GRANT_APPROVED", "cli", standingId],
        ["grant_revoke", "GRANT_REVOKED", "cli", id],
        ["grant_revoke", "SECRET_REMOVED", "cli", standingId],
      ]);
      assert.ok(rows.every((r) => r.source === "operator" && r.origin === null));
    } finally {
      db.close();
    }
    // A capture grant: once, into a ref still empty, naming its workflow and output; beside
    // it, one that names no output.
    const [last, capture, noOutput, listed] = await batch([
      ["list"],
      [
        "add",
        "github.pem",
        "--agent",
        "helper",
        "--purpose",
        "register the app",
        "--mode",
        "once",
        "--capture",
        "https://github.test",
        "--workflow",
        "github_app",
        "--output",
        "pem",
      ],
      [
        "add",
        "github.secret",
        "--agent",
        "helper",
        "--purpose",
        "register the app",
        "--mode",
        "once",
        "--capture",
        "https://github.test",
      ],
      ["list"],
    ]);
    assert.match(last.stdout, new RegExp(`^${standingId}  revoked `, "m"));
    assert.equal(capture.code, 0, capture.stderr);
    assert.equal(noOutput.code, 1);
    assert.match(noOutput.stderr, /omotai: GRANT_INVALID: /);
    assert.match(listed.stdout, /capture https:\/\/github\.test/);
    const verify = await runRuntime(["audit", "verify", "--data-dir", dir], {});
    for (const text of outputs) assert.ok(!text.includes(value), "a value was printed");
    assert.equal(verify.code, 0, verify.stderr + verify.stdout);
  });
});

Deno.test("omotai grant add refuses a missing secret, an origin with a path, a bad expiry and missing flags", async () => {
  await withRunsDir("test-grant-cli", async (dir) => {
    const key = randomVaultKey();
    await stageSecret(dir, key, "shop.user", "username", "alice");
    const base = ["--agent", "ci-bot", "--purpose", "p", "--mode", "session", "--data-dir", dir];
    const cases: [string[], RegExp][] = [
      [
        ["add", "nope", ...base, "--fill", SHOP],
        /omotai: SECRET_NOT_FOUND: the vault holds no secret nope/,
      ],
      [
        ["add", "shop.user", ...base, "--fill", `${SHOP}/login`],
        /omotai: GRANT_INVALID: .*not an http\(s\) origin/,
      ],
      [["add", "shop.user", ...base, "--fill", "*.shop.test"], /omotai: GRANT_INVALID: /],
      [["add", "shop.user", ...base], /omotai: BAD_OPTION: grant add needs --fill or --capture/],
      [
        ["add", "shop.user", ...base, "--fill", SHOP, "--expires", "1y"],
        /omotai: GRANT_INVALID: the expiry/,
      ],
      [[
        "add",
        "shop.user",
        "--agent",
        "ci-bot",
        "--mode",
        "once",
        "--fill",
        SHOP,
        "--data-dir",
        dir,
      ], /omotai: BAD_OPTION: grant add needs --purpose/],
      [[
        "add",
        "shop.user",
        ...base.slice(0, 4),
        "--mode",
        "forever",
        "--fill",
        SHOP,
        "--data-dir",
        dir,
      ], /omotai: GRANT_INVALID: invalid or missing: mode/],
      [
        ["list", "--fill", SHOP, "--data-dir", dir],
        /omotai: BAD_OPTION: --fill belongs to grant add/,
      ],
      [["rm", "--data-dir", dir], /omotai: BAD_OPTION: grant rm takes one grant id/],
    ];
    // Each refusal changes nothing: the first through the launcher, the rest and then the
    // list (which still holds no grant) in one process, each line its own run.
    const [first, ...rest] = cases.map(([args]) => ["grant", ...args]);
    const [launched, batched, usage] = await Promise.all([
      runOmotai(first, {}),
      runRuntimeBatch([...rest, ["grant", "list", "--data-dir", dir]]),
      runRuntime(["grant"], {}),
    ]);
    const none = batched.pop()!;
    const runs = [launched, ...batched];
    for (const [i, [args, expected]] of cases.entries()) {
      const res = runs[i];
      assert.equal(res.code, 1, `${args.join(" ")}: ${res.stderr}`);
      assert.match(res.stderr, expected, args.join(" "));
    }
    assert.equal(none.stdout.trim(), "no grants");
    assert.equal(usage.code, 2);
    assert.match(usage.stderr, /omotai grant add SECRET_ID --agent NAME/);
  });
});
