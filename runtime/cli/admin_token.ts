/**
 * The operator's admin token: the credential of the console door, never of the MCP door (the
 * MCP app only knows agent keys). Taken from `OMOTAI_ADMIN_TOKEN`, or made fresh at startup.
 *
 * @module
 */
import { Buffer } from "node:buffer";
import { OmotaiError } from "../mod.ts";

/** Shortest `OMOTAI_ADMIN_TOKEN` accepted, in characters. */
export const ADMIN_TOKEN_MIN_LENGTH = 32;

/** The admin token and whether it was generated (then the caller shows it, once). */
export interface AdminToken {
  readonly token: string;
  readonly generated: boolean;
}

/**
 * The admin token: `env` (the value of `OMOTAI_ADMIN_TOKEN`) when set, else 32 random bytes
 * as base64url. Throws `ADMIN_TOKEN_WEAK` when `env` is shorter than 32 characters or holds
 * anything but visible ASCII (it travels in an HTTP header). An empty `env` counts as unset.
 */
export function adminToken(env: string | undefined): AdminToken {
  if (env === undefined || env === "") {
    const token = Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("base64url");
    return { token, generated: true };
  }
  // The message gives the length at most: never the token or a part of it.
  if (env.length < ADMIN_TOKEN_MIN_LENGTH) {
    throw new OmotaiError(
      "ADMIN_TOKEN_WEAK",
      `OMOTAI_ADMIN_TOKEN has ${env.length} characters; it needs at least ${ADMIN_TOKEN_MIN_LENGTH} (e.g. openssl rand -base64 32), or leave it unset for a generated one`,
    );
  }
  if (!/^[\x21-\x7e]+$/.test(env)) {
    throw new OmotaiError(
      "ADMIN_TOKEN_WEAK",
      "OMOTAI_ADMIN_TOKEN may hold only visible ASCII characters (no spaces or line breaks)",
    );
  }
  return { token: env, generated: false };
}
