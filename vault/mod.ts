/**
 * Omotai's credential vault: secrets sealed with AES-256-GCM under a key from
 * `OMOTAI_VAULT_KEY` or a scrypt-derived passphrase, kept in the runtime's SQLite database or
 * in a shared store behind the `VaultRecords` port, and checked at open. Imports nothing from
 * `runtime/` or `ui/`.
 *
 * @module
 */
export * from "./errors.ts";
export {
  KEY_BYTES,
  keySourceFrom,
  passphraseKeySource,
  rawKeySource,
  SCRYPT_PARAMS,
  type VaultKeySource,
} from "./key.ts";
export {
  type PutOutcome,
  type Rekeying,
  type SealedRecord,
  type SecretRecord,
  SqliteVaultRecords,
  type VaultMeta,
  type VaultRecords,
} from "./records.ts";
export { open, seal, SEAL_VERSION, secretAad } from "./seal.ts";
export {
  SECRET_ID_RE,
  SECRET_KINDS,
  type SecretInfo,
  type SecretKind,
  Vault,
  VAULT_REFRESH_MS,
  type VaultOptions,
} from "./vault.ts";
