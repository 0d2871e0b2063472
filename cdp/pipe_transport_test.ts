import assert from "node:assert/strict";
import {
  MAX_MESSAGE_BYTES,
  type PipeReadable,
  PipeTransport,
  type PipeWritable,
} from "./pipe_transport.ts";

class FakeReadable implements PipeReadable {
  listeners: Record<string, ((arg?: unknown) => void)[]> = {};
  on(event: string, listener: (arg: never) => void): this {
    (this.listeners[event] ??= []).push(listener as (arg?: unknown) => void);
    return this;
  }
  emit(event: string, arg?: unknown): void {
    for (const l of this.listeners[event] ?? []) l(arg);
  }
}

class FakeWritable implements PipeWritable {
  chunks: string[] = [];
  ended = false;
  write(chunk: string | Uint8Array): boolean {
    this.chunks.push(typeof chunk === "string" ? chunk : new TextDecoder().decode(chunk));
    return true;
  }
  end(): void {
    this.ended = true;
  }
  on(): this {
    return this;
  }
}

Deno.test("PipeTransport splits NUL-framed messages across chunk boundaries", () => {
  const r = new FakeReadable();
  const t = new PipeTransport(new FakeWritable(), r);
  const got: string[] = [];
  t.onmessage = (m) => got.push(m);
  const enc = new TextEncoder();
  r.emit("data", enc.encode('{"id":1}\0{"id":'));
  r.emit("data", enc.encode('2,"x":"é"}\0'));
  r.emit("data", enc.encode('{"id":3}'));
  assert.deepEqual(got, ['{"id":1}', '{"id":2,"x":"é"}']);
  r.emit("data", enc.encode("\0"));
  assert.deepEqual(got.at(-1), '{"id":3}');
});

Deno.test("PipeTransport.send() appends a NUL terminator and stops after close", () => {
  const w = new FakeWritable();
  const r = new FakeReadable();
  const t = new PipeTransport(w, r);
  let closed = 0;
  t.onclose = () => closed++;
  t.send('{"id":1}');
  assert.equal(w.chunks.join(""), '{"id":1}\0');
  r.emit("close");
  r.emit("end");
  assert.equal(closed, 1);
  t.send('{"id":2}');
  assert.equal(w.chunks.join(""), '{"id":1}\0');
});

/** A transport over fake streams, recording messages, closes and log lines. */
function harness(options: { maxMessageBytes?: number } = {}) {
  const r = new FakeReadable();
  const w = new FakeWritable();
  const logged: string[] = [];
  const t = new PipeTransport(w, r, { ...options, log: (l) => logged.push(l) });
  const got: string[] = [];
  const closes: (string | undefined)[] = [];
  t.onmessage = (m) => got.push(m);
  t.onclose = (fault) => closes.push(fault?.code);
  return { r, w, t, got, closes, logged };
}

const enc = new TextEncoder();

Deno.test("PipeTransport refuses a message over the cap as it streams in, holding none of it", () => {
  const { r, w, t, got, closes } = harness({ maxMessageBytes: 1024 });
  r.emit("data", enc.encode('{"id":1}\0'));
  r.emit("data", new Uint8Array(600).fill(0x61));
  assert.equal(t.bufferedBytes, 600);
  // No terminator yet: the fault comes at the first byte too many, not at the end.
  r.emit("data", new Uint8Array(600).fill(0x61));
  assert.deepEqual(closes, ["CDP_MESSAGE_TOO_LARGE"]);
  assert.equal(t.fault?.code, "CDP_MESSAGE_TOO_LARGE");
  assert.equal(t.bufferedBytes, 0);
  assert.equal(w.ended, true, "the browser's side of the pipe is closed too");
  // The rest of the huge message and anything after it is dropped as it arrives.
  for (let i = 0; i < 100; i++) r.emit("data", new Uint8Array(64 * 1024).fill(0x61));
  r.emit("data", enc.encode('\0{"id":2}\0'));
  assert.equal(t.bufferedBytes, 0);
  assert.deepEqual(got, ['{"id":1}']);
  r.emit("end");
  assert.deepEqual(closes, ["CDP_MESSAGE_TOO_LARGE"], "closed once");
});

Deno.test("PipeTransport takes a message of exactly MAX_MESSAGE_BYTES and refuses one byte more", () => {
  /** `{"x":"aaa…"}` of `size` bytes. */
  const message = (size: number) => {
    const bytes = new Uint8Array(size).fill(0x61);
    bytes.set(enc.encode('{"x":"'));
    bytes.set(enc.encode('"}'), size - 2);
    return bytes;
  };
  const feed = (bytes: Uint8Array, r: FakeReadable) => {
    for (let i = 0; i < bytes.length; i += 65_536) r.emit("data", bytes.subarray(i, i + 65_536));
    r.emit("data", new Uint8Array([0]));
  };
  const ok = harness();
  feed(message(MAX_MESSAGE_BYTES), ok.r);
  assert.equal(ok.got.length, 1);
  assert.equal(ok.got[0].length, MAX_MESSAGE_BYTES);
  assert.deepEqual(ok.closes, []);

  const over = harness();
  feed(message(MAX_MESSAGE_BYTES + 1), over.r);
  assert.deepEqual(over.got, []);
  assert.deepEqual(over.closes, ["CDP_MESSAGE_TOO_LARGE"]);
});

Deno.test("PipeTransport refuses a message that is not UTF-8; a character split across chunks is fine", () => {
  const split = harness();
  const e = enc.encode('{"x":"é"}\0');
  const cut = e.indexOf(0xa9);
  split.r.emit("data", e.subarray(0, cut));
  split.r.emit("data", e.subarray(cut));
  assert.deepEqual(split.got, ['{"x":"é"}']);

  for (
    const bad of [
      [0x7b, 0xff, 0x7d],
      [0x7b, 0xc3, 0x7d], // a lead byte without its continuation
      [0x7b, 0xed, 0xa0, 0x80, 0x7d], // an encoded surrogate
    ]
  ) {
    const h = harness();
    h.r.emit("data", new Uint8Array([...bad, 0, ...enc.encode('{"id":2}\0')]));
    assert.deepEqual(h.got, [], `bytes ${bad}`);
    assert.deepEqual(h.closes, ["CDP_MESSAGE_MALFORMED"]);
    assert.equal(h.w.ended, true);
  }
});

Deno.test("PipeTransport drops a message left without its NUL when the stream ends", () => {
  const h = harness();
  h.r.emit("data", enc.encode('{"id":1}\0{"id":2,"result":{'));
  h.r.emit("end");
  h.r.emit("close");
  assert.deepEqual(h.got, ['{"id":1}']);
  assert.deepEqual(h.closes, [undefined], "a plain close: the browser ended the stream");
  assert.equal(h.t.bufferedBytes, 0);
});

Deno.test("PipeTransport survives handlers that throw: the pipe ends, the stream event does not", () => {
  const h = harness();
  h.t.onmessage = () => {
    throw new TypeError("injected");
  };
  h.r.emit("data", enc.encode('{"id":1}\0{"id":2}\0'));
  assert.deepEqual(h.closes, ["CDP_LISTENER_FAILED"]);
  assert.equal(h.w.ended, true);

  const c = harness();
  c.t.onclose = () => {
    throw new Error("injected");
  };
  c.r.emit("data", new Uint8Array([0xff, 0]));
  c.r.emit("end");
  assert.equal(c.t.fault?.code, "CDP_MESSAGE_MALFORMED");
  assert.deepEqual(c.logged, ["pipe close handler failed: Error"]);
});
