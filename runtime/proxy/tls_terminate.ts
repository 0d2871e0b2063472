/**
 * TLS termination for the egress proxy: the browser's side of a CONNECT tunnel is wrapped in
 * a TLS server (Node's `tls`, the platform's TLS, with a leaf the runtime minted for the
 * host), so every request inside the tunnel can be read and judged whole. Only byte plumbing
 * is here: no certificate is parsed or made in this process.
 *
 * @module
 */
import { Duplex } from "node:stream";
import tls from "node:tls";

/** The byte-stream surface the proxy reads and writes (a `Deno.Conn` has it). */
export interface ByteConn {
  read(p: Uint8Array): Promise<number | null>;
  write(p: Uint8Array): Promise<number>;
  close(): void;
}

/** `conn` as a Node duplex stream, with `first` (bytes already read from it) in front. */
function duplexOf(conn: ByteConn, first: Uint8Array): Duplex {
  const buf = new Uint8Array(64 * 1024);
  let pending: Uint8Array | null = first.length ? first : null;
  return new Duplex({
    read() {
      if (pending) {
        const p = pending;
        pending = null;
        this.push(p);
        return;
      }
      conn.read(buf).then(
        (n) => this.push(n === null ? null : buf.slice(0, n)),
        () => this.push(null),
      );
    },
    write(chunk: Uint8Array, _enc, done) {
      (async () => {
        let off = 0;
        while (off < chunk.length) off += await conn.write(chunk.subarray(off));
      })().then(() => done(), (err) => done(err));
    },
    final(done) {
      done();
    },
    destroy(_err, done) {
      try {
        conn.close();
      } catch { /* closed */ }
      done(null);
    },
  });
}

/** A TLS socket as a ByteConn: reads come from its data events, in order. */
class TlsByteConn implements ByteConn {
  readonly #socket: tls.TLSSocket;
  #chunks: Uint8Array[] = [];
  #ended = false;
  #wake: (() => void) | undefined;

  constructor(socket: tls.TLSSocket) {
    this.#socket = socket;
    socket.on("data", (d: Uint8Array) => {
      this.#chunks.push(new Uint8Array(d));
      this.#wake?.();
    });
    const end = () => {
      this.#ended = true;
      this.#wake?.();
    };
    socket.on("end", end);
    socket.on("close", end);
    socket.on("error", end);
  }

  async read(p: Uint8Array): Promise<number | null> {
    while (this.#chunks.length === 0) {
      if (this.#ended) return null;
      await new Promise<void>((r) => this.#wake = r);
      this.#wake = undefined;
    }
    const c = this.#chunks[0];
    const n = Math.min(c.length, p.length);
    p.set(c.subarray(0, n));
    if (n === c.length) this.#chunks.shift();
    else this.#chunks[0] = c.subarray(n);
    return n;
  }

  write(p: Uint8Array): Promise<number> {
    return new Promise((resolve, reject) => {
      if (this.#ended) return reject(new Error("closed"));
      this.#socket.write(p, (err) => err ? reject(err) : resolve(p.length));
    });
  }

  close(): void {
    this.#ended = true;
    this.#socket.destroy();
  }
}

/**
 * Wraps the browser's side of a tunnel (`first`: the bytes of its ClientHello already read)
 * in a TLS server presenting `cert` (leaf then authority, PEM) and `key`; HTTP/1.1 only.
 * Resolves once the handshake is done; rejects when it fails (the browser refused the leaf).
 */
export function terminateTls(
  conn: ByteConn,
  first: Uint8Array,
  cert: string,
  key: string,
): Promise<ByteConn> {
  return new Promise((resolve, reject) => {
    const socket = new tls.TLSSocket(duplexOf(conn, first), {
      isServer: true,
      secureContext: tls.createSecureContext({ cert, key }),
      ALPNProtocols: ["http/1.1"],
    });
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error("TLS_HANDSHAKE_TIMEOUT"));
    }, 10_000);
    let done = false;
    const secure = () => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      resolve(new TlsByteConn(socket));
    };
    socket.once("secure", secure);
    socket.once("secureConnect", secure);
    socket.once("error", (err: Error) => {
      clearTimeout(timer);
      reject(err);
    });
  });
}

/** Why an upstream TLS handshake failed, as a stable reason code. */
export function upstreamTlsReason(err: unknown): string {
  const text = String((err as Error)?.message ?? err);
  if (/NotValidForName|not valid for name|CertNotValidForName|name mismatch/i.test(text)) {
    return "UPSTREAM_CERT_NAME";
  }
  if (/Expired|NotValidYet|not valid yet/i.test(text)) return "UPSTREAM_CERT_EXPIRED";
  if (/UnknownIssuer|unknown issuer|self.signed|BadSignature/i.test(text)) {
    return "UPSTREAM_CERT_UNTRUSTED";
  }
  return "UPSTREAM_TLS_FAILED";
}
