import assert from "node:assert/strict";
import {
  randomVaultKey,
  runOmotai,
  runRuntime,
  runRuntimeBatch,
  stageSecret,
  withRunsDir,
} from "./helpers/omotai_cli.ts";

// The first calls of each test go through the `omotai` launcher; the rest run the runtime's
// own process as the launcher starts it (runRuntime), which prints and exits alike.

async function dbText(dir: string): Promise<string> {
  let text = "";
  for (const f of ["omotai.db", "omotai.db-wal"]) {
    const bytes = await Deno.readFile(`${dir}/${f}`).catch(() => new Uint8Array());
    text += new TextDecoder("latin1").decode(bytes);
  }
  return text;
}

Deno.test("omotai secret add reads stdin, list shows id and kind only, rm removes; the value is never printed or stored in clear", async () => {
  await withRunsDir("test-secret-cli", async (dir) => {
    const env = { OMOTAI_VAULT_KEY: randomVaultKey() };
    const value = `pw-${crypto.randomUUID()}`;
    const outputs: string[] = [];
    const run = async (args: string[], stdin = "", launcher = false) => {
      const res = await (launcher ? runOmotai : runRuntime)(
        [...args, "--data-dir", dir],
        env,
        stdin,
      );
      outputs.push(res.stdout, res.stderr);
      return res;
    };
    const batch = async (lines: string[][]) => {
      const runs = await runRuntimeBatch(lines.map((args) => [...args, "--data-dir", dir]), env);
      for (const res of runs) outputs.push(res.stdout, res.stderr);
      return runs;
    };

    const add = await run(
      ["secret", "add", "shop.password", "--kind", "password"],
      `${value}\n`,
      true,
    );
    assert.equal(add.code, 0, add.stderr);
    assert.match(add.stdout, /added secret shop.password \(password\)/);
    assert.equal(
      (await run(["secret", "add", "shop.user", "--kind", "username"], "alice")).code,
      0,
    );

    // The list and the refused adds change nothing: they run at once. The two that read no
    // value (a kind is refused before it is read) run in one process (runRuntimeBatch, each
    // line its own run); those given a value, each in a process of its own.
    const [[list, badKind], dup, badId, empty] = await Promise.all([
      batch([["secret", "list"], ["secret", "add", "x", "--kind", "ssh"]]),
      run(["secret", "add", "shop.user", "--kind", "username"], "bob", true),
      run(["secret", "add", "Bad Id", "--kind", "generic"], "v"),
      run(["secret", "add", "empty", "--kind", "generic"], ""),
    ]);
    assert.equal(list.code, 0, list.stderr);
    assert.match(
      list.stdout,
      /^shop\.password {2}password {2}\(since \d{4}-\d\d-\d\dT.*last used never\)$/m,
    );
    assert.match(list.stdout, /^shop\.user {2}username /m);

    assert.equal(dup.code, 1);
    assert.match(dup.stderr, /omotai: SECRET_EXISTS: /);
    assert.equal(badKind.code, 1);
    assert.match(badKind.stderr, /omotai: BAD_SECRET_KIND: /);
    assert.match(badId.stderr, /omotai: BAD_SECRET_ID: /);
    assert.equal(empty.code, 1);
    assert.match(empty.stderr, /BAD_OPTION: secret add got an empty value/);

    const [rm, again, after] = await batch([
      ["secret", "rm", "shop.user"],
      ["secret", "rm", "shop.user"],
      ["secret", "list"],
    ]);
    assert.equal(rm.code, 0, rm.stderr);
    assert.match(rm.stdout, /removed secret shop.user/);
    assert.equal(again.code, 1);
    assert.match(again.stdout, /no secret shop.user/);
    assert.ok(/^shop\.password /m.test(after.stdout) && !/shop\.user/.test(after.stdout));

    for (const text of outputs) assert.ok(!text.includes(value), "a value was printed");
    assert.ok(!(await dbText(dir)).includes(value), "the database holds the value in clear");
    assert.ok(!(await dbText(dir)).includes("alice"), "the database holds a removed value");
  });
});

Deno.test("omotai secret with a wrong key fails with VAULT_KEY_MISMATCH and a clear message; no key fails with VAULT_KEY_INVALID", async () => {
  await withRunsDir("test-secret-cli", async (dir) => {
    const key = randomVaultKey();
    const wrong = randomVaultKey();
    // The vault, set up with a raw key (the first test proves `secret add`).
    await stageSecret(dir, key, "a", "generic", "value-a");
    // Four refusals that change nothing, run at once.
    const wrongKey = (args: string[], run = runRuntime) =>
      run([...args, "--data-dir", dir], { OMOTAI_VAULT_KEY: wrong }, "v");
    const [listed, addB, none, short] = await Promise.all([
      wrongKey(["secret", "list"], runOmotai),
      wrongKey(["secret", "add", "b", "--kind", "generic"]),
      runRuntime(["secret", "list", "--data-dir", dir], {}),
      runRuntime(["secret", "list", "--data-dir", dir], { OMOTAI_VAULT_KEY: "c2hvcnQ=" }),
    ]);
    for (const res of [listed, addB]) {
      assert.equal(res.code, 1, res.stderr);
      assert.match(
        res.stderr,
        /^omotai: VAULT_KEY_MISMATCH: the key does not open this vault \(it was set up with a raw key\): check OMOTAI_VAULT_KEY or OMOTAI_VAULT_PASSPHRASE$/m,
      );
      assert.ok(!res.stderr.includes(wrong) && !res.stderr.includes(key), "no key in the message");
      assert.equal(res.stdout, "");
    }
    assert.equal(none.code, 1);
    assert.match(
      none.stderr,
      /VAULT_KEY_INVALID: no vault key: set OMOTAI_VAULT_KEY or OMOTAI_VAULT_PASSPHRASE/,
    );
    assert.match(short.stderr, /VAULT_KEY_INVALID: /);
    assert.ok(!short.stderr.includes("c2hvcnQ="));
  });
});

Deno.test("omotai vault rekey moves the vault to a new passphrase; the old key then fails", async () => {
  await withRunsDir("test-secret-cli", async (dir) => {
    const key = randomVaultKey();
    // The vault, set up with a raw key (the first test proves `secret add`).
    await stageSecret(dir, key, "kept", "totp", "JBSWY3DPEHPK3PXP");
    const rekey = await runOmotai(["vault", "rekey", "--data-dir", dir], {
      OMOTAI_VAULT_KEY: key,
      OMOTAI_VAULT_NEW_PASSPHRASE: "a new passphrase for the rekey test",
    });
    assert.equal(rekey.code, 0, rekey.stderr);
    assert.match(rekey.stdout, /rekeyed the vault \(1 secret\)/);
    const [old, list, noNew] = await Promise.all([
      runRuntime(["secret", "list", "--data-dir", dir], { OMOTAI_VAULT_KEY: key }),
      runRuntime(["secret", "list", "--data-dir", dir], {
        OMOTAI_VAULT_PASSPHRASE: "a new passphrase for the rekey test",
      }),
      runRuntime(["vault", "rekey", "--data-dir", dir], {
        OMOTAI_VAULT_PASSPHRASE: "a new passphrase for the rekey test",
      }),
    ]);
    assert.match(old.stderr, /VAULT_KEY_MISMATCH: .*set up with a passphrase/);
    assert.equal(list.code, 0, list.stderr);
    assert.match(list.stdout, /^kept {2}totp /m);
    assert.match(
      noNew.stderr,
      /VAULT_KEY_INVALID: no vault key: set OMOTAI_VAULT_NEW_KEY or OMOTAI_VAULT_NEW_PASSPHRASE/,
    );
  });
});
