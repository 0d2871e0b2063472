/**
 * Mirrors audit rows to a JSONL file (`--audit FILE.jsonl`), one row per line with its
 * hashes, so a copy outside the database can be checked with `omotai audit verify --jsonl`.
 * When the file reaches its size limit it is rotated to `FILE.1` (older ones shift up);
 * rows keep their chain hashes, so the rotated files together still verify. Each line passes
 * through the redactor once more: the rows a store's writer hands over are redacted already, and a
 * line that still changes (a secret added in between) is written redacted, breaking that
 * row's hash rather than keeping the value.
 *
 * @module
 */
import { processRedactor, type Redactor } from "../redact/mod.ts";
import type { AuditMirror, AuditRow } from "../store/mod.ts";

/** Rotation settings. */
export interface MirrorOptions {
  /** Rotate when the file would exceed this many bytes; default 10 MiB. */
  maxBytes?: number;
  /** How many rotated files to keep; default 5. */
  keep?: number;
  /** Default: the process's redactor. */
  redactor?: Redactor;
}

/** Appends rows to a JSONL file. */
export class JsonlMirror implements AuditMirror, Disposable {
  readonly path: string;
  #file: Deno.FsFile;
  #size: number;
  #maxBytes: number;
  #keep: number;
  #encoder = new TextEncoder();
  #redactor: Redactor;

  constructor(path: string, options: MirrorOptions = {}) {
    this.path = path;
    this.#maxBytes = options.maxBytes ?? 10 * 1024 * 1024;
    this.#keep = options.keep ?? 5;
    this.#redactor = options.redactor ?? processRedactor();
    this.#file = Deno.openSync(path, { append: true, create: true, mode: 0o600 });
    this.#size = this.#file.statSync().size;
  }

  /** Writes one row (rotating first when the file is full). */
  write(row: AuditRow): void {
    const bytes = this.#encoder.encode(this.#redactor.redact(JSON.stringify(row)) + "\n");
    if (this.#size > 0 && this.#size + bytes.length > this.#maxBytes) this.#rotate();
    let off = 0;
    while (off < bytes.length) off += this.#file.writeSync(bytes.subarray(off));
    this.#size += bytes.length;
  }

  #rotate(): void {
    this.#file.close();
    for (let i = this.#keep - 1; i >= 1; i--) {
      try {
        Deno.renameSync(`${this.path}.${i}`, `${this.path}.${i + 1}`);
      } catch (err) {
        if (!(err instanceof Deno.errors.NotFound)) throw err;
      }
    }
    Deno.renameSync(this.path, `${this.path}.1`);
    this.#file = Deno.openSync(this.path, { append: true, create: true, mode: 0o600 });
    this.#size = 0;
  }

  /** The mirror's files, oldest first (rotated ones, then the live file). */
  static files(path: string, keep = 5): string[] {
    const out: string[] = [];
    for (let i = keep; i >= 1; i--) {
      try {
        Deno.statSync(`${path}.${i}`);
        out.push(`${path}.${i}`);
      } catch { /* not there */ }
    }
    out.push(path);
    return out;
  }

  [Symbol.dispose](): void {
    try {
      this.#file.close();
    } catch { /* already closed */ }
  }
}
