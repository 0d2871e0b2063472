/**
 * The runtime's signer of checkpoints: every minute (and when it stops) it signs its
 * tenant's audit head, if the head moved, and writes the checkpoint beside the rows and to
 * a JSONL file of its own. The file is what `omotai audit verify --checkpoints` holds a
 * chain against; keep it (and the key's public half) where the database's owner cannot
 * write. The key lives in the data dir (`audit-checkpoint.key`, mode 0600), never in the
 * database.
 *
 * @module
 */
import { join } from "node:path";
import { OmotaiError } from "../mod.ts";
import type { AuditStore, Checkpoint } from "../store/mod.ts";
import {
  type CheckpointKey,
  exportCheckpointKey,
  generateCheckpointKey,
  importCheckpointKey,
  parseCheckpoint,
  signCheckpoint,
} from "./checkpoint.ts";

/** How often the head is signed by default. */
export const CHECKPOINT_EVERY_MS = 60_000;

/** The key's file names in a data dir. */
export const CHECKPOINT_KEY_FILE = "audit-checkpoint.key";
export const CHECKPOINT_PUB_FILE = "audit-checkpoint.pub";
/** The checkpoints' JSONL file in a data dir. */
export const CHECKPOINT_FILE = "audit-checkpoints.jsonl";

/** What a checkpointer needs. */
export interface CheckpointerOptions {
  store: AuditStore;
  key: CheckpointKey;
  /** Names this runtime in each checkpoint. */
  runtime: string;
  /** The JSONL file checkpoints are appended to. */
  file: string;
  intervalMs?: number;
  log(line: string): void;
}

/** Signs a store's head on a timer and at the end. */
export class Checkpointer implements AsyncDisposable {
  readonly #o: CheckpointerOptions;
  #timer: ReturnType<typeof setInterval> | undefined;
  #lastSeq = -1;
  #running: Promise<unknown> = Promise.resolve();

  constructor(options: CheckpointerOptions) {
    this.#o = options;
  }

  /** Signs now, then every interval. */
  start(): void {
    this.#tick();
    this.#timer = setInterval(() => this.#tick(), this.#o.intervalMs ?? CHECKPOINT_EVERY_MS);
    Deno.unrefTimer(this.#timer);
  }

  /** Signs the head if it moved since the last checkpoint; returns what it signed. */
  async checkpoint(): Promise<Checkpoint | undefined> {
    const head = await this.#o.store.head();
    if (head.seq === this.#lastSeq) return undefined;
    const c = signCheckpoint(this.#o.key, {
      tenant: this.#o.store.tenant,
      seq: head.seq,
      hash: head.hash,
      runtime: this.#o.runtime,
    });
    // The file first: it is the copy the database's owner cannot reach.
    await Deno.writeTextFile(this.#o.file, JSON.stringify(c) + "\n", { append: true, mode: 0o600 });
    await this.#o.store.addCheckpoint(c);
    this.#lastSeq = head.seq;
    return c;
  }

  #tick(): void {
    this.#running = this.#running.then(() => this.checkpoint()).catch((err) =>
      this.#o.log(
        `audit checkpoint not written: ${err instanceof OmotaiError ? err.code : "ERROR"}`,
      )
    );
  }

  /** Stops the timer and signs the final head. */
  async [Symbol.asyncDispose](): Promise<void> {
    clearInterval(this.#timer);
    this.#tick();
    await this.#running;
  }
}

/**
 * The data dir's checkpoint key, made on first use (the private half 0600, the public half
 * beside it for whoever verifies).
 */
export async function checkpointKeyIn(dataDir: string): Promise<CheckpointKey> {
  const path = join(dataDir, CHECKPOINT_KEY_FILE);
  try {
    return importCheckpointKey(await Deno.readTextFile(path));
  } catch (err) {
    if (!(err instanceof Deno.errors.NotFound)) throw err;
  }
  const key = generateCheckpointKey();
  const pem = exportCheckpointKey(key);
  await Deno.writeTextFile(path, pem.private, { mode: 0o600, createNew: true });
  await Deno.writeTextFile(join(dataDir, CHECKPOINT_PUB_FILE), pem.public, { mode: 0o644 });
  return key;
}

/** Reads a checkpoints file; a line that is not a checkpoint is a problem, not skipped. */
export async function readCheckpoints(
  path: string,
): Promise<{ checkpoints: Checkpoint[]; problems: string[] }> {
  const checkpoints: Checkpoint[] = [];
  const problems: string[] = [];
  let text: string;
  try {
    text = await Deno.readTextFile(path);
  } catch (err) {
    throw new OmotaiError(
      "BAD_OPTION",
      `cannot read the checkpoints file ${path}: ${err instanceof Error ? err.name : "error"}`,
    );
  }
  const lines = text.split("\n");
  lines.forEach((line, i) => {
    if (!line.trim()) return;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch { /* reported below */ }
    const c = parseCheckpoint(value);
    if (c) checkpoints.push(c);
    else problems.push(`${path}:${i + 1}: not a checkpoint`);
  });
  return { checkpoints, problems };
}
