/**
 * Typed errors of the vault. Each carries a stable UPPER_SNAKE `code` so callers can map
 * them without parsing messages. No message ever carries a secret value or key material;
 * a secret's id may appear (ids are names, not secrets).
 *
 * @module
 */
import { CodedError } from "../shared/mod.ts";

/** Every stable code a {@link VaultError} may carry. */
export type VaultErrorCode =
  | "VAULT_KEY_MISMATCH"
  | "VAULT_KEY_INVALID"
  | "VAULT_TAMPERED"
  | "VAULT_UNREADABLE"
  | "VAULT_CLOSED"
  | "SECRET_EXISTS"
  | "SECRET_NOT_FOUND"
  | "BAD_SECRET_ID"
  | "BAD_SECRET_KIND";

/** The error thrown by everything in `vault/` (the project's one base, `CodedError`). */
export class VaultError extends CodedError<VaultErrorCode> {}
