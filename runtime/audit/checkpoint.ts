/**
 * Signed checkpoints of an audit chain: a tenant's head (its last row's number and hash),
 * signed with an Ed25519 key the runtime keeps outside the database, like the policy
 * signing keys. Someone who holds the database (its superuser included) can rewrite every
 * row and recompute every hash so the chain verifies again; they cannot sign. A chain whose
 * row at a checkpoint's number no longer has the checkpoint's hash, or that ends before it,
 * was rewritten: `checkAgainst` says so.
 *
 * The signed bytes are a canonical JSON object (RFC 8785 for what it holds: string and
 * integer members, keys sorted, no spaces). A store keeps checkpoints (runtime/store/'s
 * `Checkpoint` record) and walks its chain; signing and judging signatures are this file's, and
 * a store's `verify()` is handed them as a `ChainCheck` (`checkpointCheck()`).
 *
 * @module
 */
import {
  createHash,
  createPrivateKey,
  createPublicKey,
  generateKeyPairSync,
  type KeyObject,
  sign,
  verify,
} from "node:crypto";
import { Buffer } from "node:buffer";
import { z } from "zod";
import { OmotaiError } from "../mod.ts";
import type { ChainCheck, ChainView, Checkpoint } from "../store/mod.ts";

const CheckpointSchema = z.strictObject({
  v: z.literal(1),
  tenant: z.string().min(1).max(63),
  seq: z.int().min(0),
  hash: z.string().regex(/^[0-9a-f]{64}$/),
  ts: z.string().max(40),
  runtime: z.string().min(1).max(100),
  key_id: z.string().regex(/^[0-9a-f]{16}$/),
  sig: z.string().max(200),
});

/** A checkpoint signing key and its public half. */
export interface CheckpointKey {
  private: KeyObject;
  public: KeyObject;
  keyId: string;
}

/** A new key pair. */
export function generateCheckpointKey(): CheckpointKey {
  const { privateKey, publicKey } = generateKeyPairSync("ed25519");
  return { private: privateKey, public: publicKey, keyId: keyId(publicKey) };
}

/** The key as PEM: PKCS#8 for the private half (mode 0600), SPKI for the public one. */
export function exportCheckpointKey(key: CheckpointKey): { private: string; public: string } {
  return {
    private: key.private.export({ type: "pkcs8", format: "pem" }).toString(),
    public: key.public.export({ type: "spki", format: "pem" }).toString(),
  };
}

/** Reads a private key's PEM; `CHECKPOINT_KEY_INVALID` when it is not an Ed25519 key. */
export function importCheckpointKey(pem: string): CheckpointKey {
  try {
    const priv = createPrivateKey(pem);
    if (priv.asymmetricKeyType !== "ed25519") throw new Error("not ed25519");
    const pub = createPublicKey(priv);
    return { private: priv, public: pub, keyId: keyId(pub) };
  } catch {
    throw new OmotaiError("CHECKPOINT_KEY_INVALID", "the checkpoint key is not an Ed25519 key");
  }
}

/** Reads a public key's PEM; `CHECKPOINT_KEY_INVALID` when it is not an Ed25519 key. */
export function importCheckpointPublicKey(pem: string): KeyObject {
  try {
    const pub = createPublicKey(pem);
    if (pub.asymmetricKeyType !== "ed25519") throw new Error("not ed25519");
    return pub;
  } catch {
    throw new OmotaiError("CHECKPOINT_KEY_INVALID", "the checkpoint key is not an Ed25519 key");
  }
}

function keyId(pub: KeyObject): string {
  const der = pub.export({ type: "spki", format: "der" });
  return createHash("sha256").update(der).digest("hex").slice(0, 16);
}

/** The bytes a checkpoint's signature covers. */
function signedBytes(c: Omit<Checkpoint, "sig">): Uint8Array {
  const members = Object.entries(c).sort(([a], [b]) => a < b ? -1 : a > b ? 1 : 0);
  return new TextEncoder().encode(
    `{${members.map(([k, v]) => `${JSON.stringify(k)}:${JSON.stringify(v)}`).join(",")}}`,
  );
}

/** Signs tenant `tenant`'s head. */
export function signCheckpoint(
  key: CheckpointKey,
  head: { tenant: string; seq: number; hash: string; runtime: string },
  now = new Date(),
): Checkpoint {
  const body = {
    v: 1 as const,
    tenant: head.tenant,
    seq: head.seq,
    hash: head.hash,
    ts: now.toISOString(),
    runtime: head.runtime,
    key_id: key.keyId,
  };
  return { ...body, sig: sign(null, signedBytes(body), key.private).toString("base64") };
}

/** Parses one checkpoint (a JSONL line's value); `undefined` when it is not one. */
export function parseCheckpoint(value: unknown): Checkpoint | undefined {
  const parsed = CheckpointSchema.safeParse(value);
  return parsed.success ? parsed.data : undefined;
}

/** Whether `c` was signed by `pub` (`pubId`: its key id, when the caller has it already). */
export function checkpointSigned(c: Checkpoint, pub: KeyObject, pubId = keyId(pub)): boolean {
  if (c.key_id !== pubId) return false;
  const { sig, ...body } = c;
  try {
    return verify(null, signedBytes(body), pub, Buffer.from(sig, "base64"));
  } catch {
    return false;
  }
}

/** Rows signed this long before their checkpoint still count as that young (the signing cadence). */
const SIGNING_SLACK_MS = 120_000;

/**
 * Problems of `chain` against `checkpoints` of its tenant signed by `pub`: an unsigned or
 * foreign-signed checkpoint, a row whose hash is not the one signed, a chain that ends
 * before a signed head, a signed row gone before the chain's retention allows. Checkpoints
 * of rows pruned since are checked at the anchor only.
 */
export function checkAgainst(
  chain: ChainView,
  tenant: string,
  checkpoints: Iterable<Checkpoint>,
  pub: KeyObject,
  now = Date.now(),
): { checked: number; problems: string[] } {
  const problems: string[] = [];
  let checked = 0;
  // A minute's checkpoints over a retention are many: the key's id is worked out once.
  const pubId = keyId(pub);
  for (const c of checkpoints) {
    if (c.tenant !== tenant) continue;
    if (!checkpointSigned(c, pub, pubId)) {
      problems.push(`checkpoint at row ${c.seq} (${c.ts}): not signed by this key`);
      continue;
    }
    checked++;
    if (c.seq > chain.head.seq) {
      problems.push(
        `checkpoint at row ${c.seq} (${c.ts}): the chain ends at row ${chain.head.seq}; signed rows were removed`,
      );
    } else if (c.seq < chain.anchor.seq && tooYoung(c, chain, now)) {
      // A prune removes only rows past the retention: these were deleted some other way
      // (and the anchor moved to hide it).
      problems.push(
        `checkpoint at row ${c.seq} (${c.ts}): the row was removed before the retention allows; the history was cut`,
      );
    } else if (c.seq === chain.anchor.seq - 1) {
      if (c.seq > 0 && c.hash !== chain.anchor.prevHash) {
        problems.push(`checkpoint at row ${c.seq} (${c.ts}): the anchor does not match it`);
      }
    } else if (c.seq >= chain.anchor.seq) {
      const hash = chain.hashAt(c.seq);
      if (hash !== c.hash) {
        problems.push(
          `checkpoint at row ${c.seq} (${c.ts}): row ${c.seq} is not the row that was signed; the history was rewritten`,
        );
      }
    }
  }
  return { checked, problems };
}

function tooYoung(c: Checkpoint, chain: ChainView, now: number): boolean {
  if (chain.retentionMs === undefined || c.seq === 0) return false;
  const signed = Date.parse(c.ts);
  return Number.isFinite(signed) && signed - SIGNING_SLACK_MS > now - chain.retentionMs;
}

/** Signed checkpoints to hold a chain against, and the key that signed them. */
export interface CheckpointCheck {
  checkpoints: Iterable<Checkpoint>;
  publicKey: KeyObject;
  /** Where they came from (a file), named in each problem they find. */
  source?: string;
}

/**
 * `check` as a store's `verify()` takes it: the problems {@link checkAgainst} finds, each
 * prefixed with where the checkpoints came from.
 */
export function checkpointCheck(check: CheckpointCheck): ChainCheck {
  return {
    problems: (chain, tenant) =>
      checkAgainst(chain, tenant, check.checkpoints, check.publicKey).problems
        .map((p) => check.source === undefined ? p : `${check.source}: ${p}`),
  };
}
