/**
 * Private Chromium profile directories: one per agent session, mode 0700, removed at
 * teardown. Each runtime instance owns a directory it keeps touching; directories whose
 * heartbeat stopped (a crashed runtime) are swept when the next runtime opens the store.
 *
 * @module
 */
import { join } from "node:path";

const HEARTBEAT_FILE = ".heartbeat";
/** How often a live instance touches its heartbeat. */
export const HEARTBEAT_MS = 10_000;
/** A heartbeat older than this marks an abandoned instance directory. */
export const STALE_AFTER_MS = 60_000;

/** Creates and removes per-session profile directories below `<dataDir>/profiles`. */
export class ProfileStore implements AsyncDisposable {
  readonly root: string;
  readonly instanceDir: string;
  #timer: ReturnType<typeof setInterval> | undefined;
  #closed = false;

  private constructor(root: string, instanceDir: string) {
    this.root = root;
    this.instanceDir = instanceDir;
  }

  /** Opens the store: sweeps abandoned instances, then claims a fresh instance directory. */
  static async open(dataDir: string, now: () => number = Date.now): Promise<ProfileStore> {
    const root = join(dataDir, "profiles");
    await Deno.mkdir(root, { recursive: true, mode: 0o700 });
    await sweepStaleProfiles(root, now());
    const instanceDir = join(root, `i${crypto.randomUUID().slice(0, 12)}`);
    await Deno.mkdir(instanceDir, { mode: 0o700 });
    await Deno.chmod(instanceDir, 0o700);
    const store = new ProfileStore(root, instanceDir);
    await store.#beat();
    const timer = setInterval(() => store.#beat().catch(() => {}), HEARTBEAT_MS);
    Deno.unrefTimer(timer);
    store.#timer = timer;
    return store;
  }

  /** Creates a new empty profile directory, mode 0700. */
  async create(): Promise<string> {
    const dir = join(this.instanceDir, `s${crypto.randomUUID().slice(0, 12)}`);
    await Deno.mkdir(dir, { mode: 0o700 });
    // mkdir's mode is filtered by the umask; chmod makes 0700 exact.
    await Deno.chmod(dir, 0o700);
    return dir;
  }

  /** Removes a profile directory; missing is fine. */
  async remove(dir: string): Promise<void> {
    await removeTree(dir);
  }

  /** Stops the heartbeat and removes this instance's directories. */
  async [Symbol.asyncDispose](): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    clearInterval(this.#timer);
    await removeTree(this.instanceDir);
  }

  async #beat(): Promise<void> {
    if (this.#closed) return;
    await Deno.writeTextFile(join(this.instanceDir, HEARTBEAT_FILE), String(Date.now()));
  }
}

/** Removes instance directories under `root` whose heartbeat is older than `STALE_AFTER_MS`. */
export async function sweepStaleProfiles(root: string, now: number): Promise<string[]> {
  const removed: string[] = [];
  for await (const entry of Deno.readDir(root)) {
    if (!entry.isDirectory) continue;
    const dir = join(root, entry.name);
    let last: number;
    try {
      last = (await Deno.stat(join(dir, HEARTBEAT_FILE))).mtime?.getTime() ?? 0;
    } catch {
      last = (await Deno.stat(dir)).mtime?.getTime() ?? 0;
    }
    if (now - last < STALE_AFTER_MS) continue;
    await removeTree(dir);
    removed.push(dir);
  }
  return removed;
}

async function removeTree(dir: string): Promise<void> {
  // Chromium may still be flushing files for a moment after exit; retry briefly.
  for (let attempt = 0; attempt < 5; attempt++) {
    try {
      await Deno.remove(dir, { recursive: true });
      return;
    } catch (err) {
      if (err instanceof Deno.errors.NotFound) return;
      if (attempt === 4) throw err;
      await new Promise((r) => setTimeout(r, 50 * (attempt + 1)));
    }
  }
}
