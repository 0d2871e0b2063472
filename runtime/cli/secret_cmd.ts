/**
 * `omotai secret add|rm|list` and `omotai vault rekey`: the operator's side of the credential
 * vault, the data dir's embedded one or a tenant's in the shared PostgreSQL store
 * (`--database URL` or `OMOTAI_DATABASE_URL`, with `--tenant ID`; `vault rekey` is the data
 * dir's only). A value is read from stdin, never from argv (a hidden prompt on a terminal, the
 * whole input from a pipe, one trailing newline dropped) and is never printed. The vault key
 * comes from `OMOTAI_VAULT_KEY` (32 bytes, base64) or `OMOTAI_VAULT_PASSPHRASE`; `vault rekey`
 * takes the new one from `OMOTAI_VAULT_NEW_KEY` or `OMOTAI_VAULT_NEW_PASSPHRASE`. `secret rm`
 * revokes the secret's grants (audited, `SECRET_REMOVED`) before it removes the value.
 *
 * @module
 */
import { OmotaiError, readAtMost } from "../mod.ts";
import type { DatabaseSync } from "node:sqlite";
import { parseArgs } from "node:util";
import {
  keySourceFrom,
  SECRET_KINDS,
  type SecretKind,
  Vault,
  VaultError,
  type VaultKeySource,
} from "../../vault/mod.ts";
import type { Grants } from "../grants/mod.ts";
import { SECRET_OPTIONS, VAULT_OPTIONS } from "../launcher/mod.ts";
import { type PgDatabase, PgVaultRecords } from "../store/mod.ts";
import { type CommandGrants, pgCommandGrants, sqliteCommandGrants } from "./grant_cmd.ts";
import { type StoreOptions, withEmbeddedStore, withStore } from "./store_choice.ts";

/** Usage of `omotai secret` and `omotai vault`. */
export const SECRET_USAGE =
  `omotai secret add ID --kind password|username|totp|generic   (the value on stdin)
                  [--data-dir DIR | --database URL --tenant ID]
omotai secret rm ID [--data-dir DIR | --database URL --tenant ID]   (also revokes its grants)
omotai secret list [--data-dir DIR | --database URL --tenant ID]
omotai vault rekey [--data-dir DIR]   (new key in OMOTAI_VAULT_NEW_KEY or OMOTAI_VAULT_NEW_PASSPHRASE)
The vault key: OMOTAI_VAULT_KEY (32 bytes, base64) or OMOTAI_VAULT_PASSPHRASE.`;

/** The longest value `secret add` accepts, in bytes. */
const MAX_VALUE_BYTES = 64 * 1024;

/** Reads a secret's value, given the prompt a terminal shows (tests hand in their own). */
export type ValueReader = (prompt: string) => Promise<string>;

/** Runs a secret subcommand; returns the exit code. `read` is stdin's reader by default. */
export async function secretCommand(
  args: string[],
  read: ValueReader = readValue,
): Promise<number> {
  const [sub, ...rest] = args;
  const { values, positionals } = parseArgs({
    args: rest,
    allowPositionals: true,
    options: SECRET_OPTIONS,
  });
  if (sub !== "add" && values.kind !== undefined) {
    throw new OmotaiError("BAD_OPTION", `--kind belongs to secret add\n${SECRET_USAGE}`);
  }
  switch (sub) {
    case "add": {
      const kind = values.kind;
      if (positionals.length !== 1 || kind === undefined) {
        throw new OmotaiError(
          "BAD_OPTION",
          `secret add takes one id and --kind (the value comes on stdin)\n${SECRET_USAGE}`,
        );
      }
      if (!(SECRET_KINDS as readonly string[]).includes(kind)) {
        throw new VaultError("BAD_SECRET_KIND", `--kind must be one of ${SECRET_KINDS.join(", ")}`);
      }
      const id = positionals[0];
      // Key and id first, so a wrong key or a taken id fails before the value is typed.
      await withVault(values, async (vault) => {
        if (vault.list().some((s) => s.id === id)) {
          throw new VaultError("SECRET_EXISTS", `a secret ${id} already exists`);
        }
        const value = await read(`value for ${id} (hidden): `);
        if (value.length === 0) {
          throw new OmotaiError("BAD_OPTION", "secret add got an empty value on stdin");
        }
        await vault.add(id, kind as SecretKind, value);
      });
      console.log(`added secret ${id} (${kind})`);
      return 0;
    }
    case "rm": {
      if (positionals.length !== 1) {
        throw new OmotaiError("BAD_OPTION", `secret rm takes one id\n${SECRET_USAGE}`);
      }
      const id = positionals[0];
      const [removed, revoked] = await withVault(values, async (vault, grants) => {
        // Grants first: if removing the value then fails, the grants are gone all the same
        // (fail closed), never live for a secret that is half removed.
        const revoked = await grants().revokeForSecret(id, { by: "cli" });
        return [await vault.remove(id), revoked] as const;
      });
      const grants = revoked > 0 ? ` and revoked ${revoked} grant${revoked === 1 ? "" : "s"}` : "";
      console.log(removed ? `removed secret ${id}${grants}` : `no secret ${id}${grants}`);
      return removed ? 0 : 1;
    }
    case "list": {
      if (positionals.length !== 0) {
        throw new OmotaiError("BAD_OPTION", `secret list takes no id\n${SECRET_USAGE}`);
      }
      const secrets = await withVault(values, (vault) => Promise.resolve(vault.list()));
      if (secrets.length === 0) console.log("no secrets");
      for (const s of secrets) {
        console.log(
          `${s.id}  ${s.kind}  (since ${s.createdAt}, last used ${s.lastUsedAt ?? "never"})`,
        );
      }
      return 0;
    }
    default:
      console.error(SECRET_USAGE);
      return 2;
  }
}

/** Runs a vault subcommand (`rekey`); returns the exit code. */
export async function vaultCommand(args: string[]): Promise<number> {
  const [sub, ...rest] = args;
  const { values, positionals } = parseArgs({
    args: rest,
    allowPositionals: true,
    options: VAULT_OPTIONS,
  });
  if (sub !== "rekey") {
    console.error(SECRET_USAGE);
    return 2;
  }
  if (positionals.length !== 0) {
    throw new OmotaiError("BAD_OPTION", `vault rekey takes no argument\n${SECRET_USAGE}`);
  }
  const next = keySourceFrom(
    {
      key: Deno.env.get("OMOTAI_VAULT_NEW_KEY"),
      passphrase: Deno.env.get("OMOTAI_VAULT_NEW_PASSPHRASE"),
    },
    { key: "OMOTAI_VAULT_NEW_KEY", passphrase: "OMOTAI_VAULT_NEW_PASSPHRASE" },
  );
  // The data dir's vault only: rekey takes no database.
  const count = await withVault(
    { "data-dir": values["data-dir"] },
    (vault) => vault.rekey(next),
    { embeddedOnly: true },
  );
  console.log(
    `rekeyed the vault (${count} secret${count === 1 ? "" : "s"}); ` +
      "from now on open it with the new key",
  );
  return 0;
}

/** The current key from the environment. */
function currentKey(): VaultKeySource {
  return keySourceFrom(
    {
      key: Deno.env.get("OMOTAI_VAULT_KEY"),
      passphrase: Deno.env.get("OMOTAI_VAULT_PASSPHRASE"),
    },
    { key: "OMOTAI_VAULT_KEY", passphrase: "OMOTAI_VAULT_PASSPHRASE" },
  );
}

/** A store's vault, not yet opened, and how its grants are made once it is. */
interface VaultSide {
  open(source: VaultKeySource): Promise<Vault>;
  grants(vault: Vault): CommandGrants;
}

/**
 * Runs `fn` on the vault `options` choose (a tenant's in the shared store, else the data
 * dir's; `embeddedOnly`: the data dir's whatever the environment names) opened with the
 * current key, and on that store's grants (made on first use); the key is dropped and the
 * store closed after.
 */
async function withVault<T>(
  options: StoreOptions,
  fn: (vault: Vault, grants: () => Grants) => Promise<T>,
  { embeddedOnly = false } = {},
): Promise<T> {
  const source = currentKey();
  const run = async (side: VaultSide): Promise<T> => {
    let vault: Vault;
    try {
      vault = await side.open(source);
    } catch (err) {
      if (err instanceof VaultError && err.code === "VAULT_KEY_MISMATCH") {
        throw new VaultError(
          err.code,
          `${err.message}: check OMOTAI_VAULT_KEY or OMOTAI_VAULT_PASSPHRASE`,
        );
      }
      throw err;
    }
    using open = vault;
    // Made only when asked for (`secret rm`), and flushed before the store closes.
    let made: CommandGrants | undefined;
    try {
      return await fn(open, () => (made ??= side.grants(open)).grants);
    } finally {
      await made?.[Symbol.asyncDispose]();
    }
  };
  const adapters = {
    pg: (db: PgDatabase, tenant: string): VaultSide => {
      const records = new PgVaultRecords(db, tenant);
      return {
        // A command reads the index once, at open: no refresh timer to outlive it.
        open: (key) => Vault.open(records, key, { refreshMs: 0 }),
        grants: () => pgCommandGrants(db, tenant, { has: (id) => Vault.has(records, id) }),
      };
    },
    sqlite: (db: DatabaseSync): VaultSide => ({
      open: (key) => Vault.open(db, key),
      grants: (vault) => sqliteCommandGrants(db, vault),
    }),
  };
  if (embeddedOnly) {
    return await withEmbeddedStore(options["data-dir"], (db) => run(adapters.sqlite(db)));
  }
  return await withStore(options, adapters, run);
}

/** The value: a hidden prompt on a terminal, else all of stdin less one trailing newline. */
async function readValue(prompt: string): Promise<string> {
  if (Deno.stdin.isTerminal()) return await readHidden(prompt);
  const bytes = await readAtMost(Deno.stdin.readable, MAX_VALUE_BYTES);
  if (bytes === null) {
    throw new OmotaiError("BAD_OPTION", `a secret value is at most ${MAX_VALUE_BYTES} bytes`);
  }
  return new TextDecoder().decode(bytes).replace(/\r?\n$/, "");
}

/** Reads one line from the terminal without echo. */
async function readHidden(prompt: string): Promise<string> {
  const encoder = new TextEncoder();
  await Deno.stderr.write(encoder.encode(prompt));
  Deno.stdin.setRaw(true);
  const bytes: number[] = [];
  try {
    const buf = new Uint8Array(256);
    read: while (true) {
      const n = await Deno.stdin.read(buf);
      if (n === null) break;
      for (const b of buf.subarray(0, n)) {
        if (b === 0x0d || b === 0x0a) break read;
        if (b === 0x03) throw new OmotaiError("BAD_OPTION", "secret add was interrupted");
        if (b === 0x7f || b === 0x08) bytes.pop();
        else bytes.push(b);
        if (bytes.length > MAX_VALUE_BYTES) {
          throw new OmotaiError("BAD_OPTION", `a secret value is at most ${MAX_VALUE_BYTES} bytes`);
        }
      }
    }
  } finally {
    Deno.stdin.setRaw(false);
    await Deno.stderr.write(encoder.encode("\n"));
  }
  return new TextDecoder().decode(new Uint8Array(bytes));
}
