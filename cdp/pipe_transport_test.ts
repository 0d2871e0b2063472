import assert from "node:assert/strict";
import {
  CDP_BYTE_RATE,
  MAX_MESSAGE_BYTES,
  type PipeReadable,
  PipeTransport,
  type PipeWritable,
} from "./pipe_transport.ts";

class FakeReadable implements PipeReadable {
  listeners: Record<string, ((arg?: unknown) => void)[]> = {};
  paused = false;
  /** Chunks the stream holds while paused, delivered on resume (as a Node stream does). */
  held: unknown[] = [];
  pause(): this {
    this.paused = true;
    return this;
  }
  resume(): this {
    this.paused = false;
    for (const chunk of this.held.splice(0)) this.emit("data", chunk);
    return this;
  }
  on(event: string, listener: (arg: never) => void): this {
    (this.listeners[event] ??= []).push(listener as (arg?: unknown) => void);
    return this;
  }
  emit(event: string, arg?: unknown): void {
    if (event === "data" && this.paused) {
      this.held.push(arg);
      return;
    }
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

/** An event of `n` bytes in all, as Chromium frames one (its NUL not counted). */
function event(n: number): Uint8Array {
  const head = '{"method":"Runtime.consoleAPICalled","params":{"v":"';
  const tail = '"}}';
  return new TextEncoder().encode(head + "x".repeat(n - head.length - tail.length) + tail + "\0");
}

/** A reply of `n` bytes in all. */
function reply(id: number, n: number): Uint8Array {
  const head = `{"id":${id},"result":{"v":"`;
  const tail = '"}}';
  return new TextEncoder().encode(head + "x".repeat(n - head.length - tail.length) + tail + "\0");
}

/** A transport metered at 1,000 event bytes/s with a 2,000-byte bucket, on a test clock. */
function metered(floodMs = 5_000) {
  const clock = { now: 0 };
  const r = new FakeReadable();
  const w = new FakeWritable();
  const t = new PipeTransport(w, r, {
    byteRate: { bytesPerSec: 1_000, burstBytes: 2_000, floodMs },
    now: () => clock.now,
  });
  const got: string[] = [];
  t.onmessage = (m) => got.push(m);
  let fault: string | undefined;
  t.onclose = (f) => fault = f?.code;
  return { clock, r, w, t, got, fault: () => fault };
}

Deno.test("PipeTransport pauses the pipe when events come over the rate, and resumes after the debt", async () => {
  const { clock, r, t, got } = metered();
  r.emit("data", event(2_000));
  assert.equal(r.paused, false);
  // 500 bytes past the bucket: half a second of debt.
  r.emit("data", event(500));
  assert.equal(got.length, 2, "what was read is delivered; only further reads wait");
  assert.equal(r.paused, true);
  assert.equal(t.slowed, true);
  r.emit("data", event(60));
  assert.equal(got.length, 2, "nothing is read while paused");
  clock.now = 600;
  await new Promise((done) => setTimeout(done, 700));
  assert.equal(r.paused, false);
  assert.equal(got.length, 3);
  assert.equal(t.eventBytesRead, 2_560);
  t.close();
});

Deno.test("PipeTransport meters events only: replies to the runtime's own commands are not counted", () => {
  const { r, t, got } = metered();
  for (let i = 1; i <= 10; i++) r.emit("data", reply(i, 5_000));
  assert.equal(got.length, 10);
  assert.equal(r.paused, false);
  assert.equal(t.eventBytesRead, 0);
  assert.equal(t.bytesRead, 50_010, "every byte read, NULs too");
  // A reply split before its first six bytes is counted as an event: the safe side.
  const split = reply(11, 100);
  r.emit("data", split.subarray(0, 3));
  r.emit("data", split.subarray(3));
  assert.equal(t.eventBytesRead, 100);
  t.close();
});

Deno.test("PipeTransport ends a browser whose events stay over the rate: SESSION_FLOODING, nothing more decoded", () => {
  const { clock, r, t, got, fault } = metered(5_000);
  r.emit("data", event(2_000));
  // Every second the debt of the second before is paid and 1,000 more bytes come: the spell
  // never ends. The resume timer is not waited for: the test's clock stands for it.
  for (let s = 0; s <= 4; s++) {
    clock.now = s * 1_000;
    r.paused = false;
    r.emit("data", event(1_000));
    assert.equal(fault(), undefined, `second ${s}`);
  }
  const before = got.length;
  clock.now = 5_000;
  r.paused = false;
  r.emit("data", event(1_000));
  assert.equal(fault(), "SESSION_FLOODING");
  assert.equal(t.fault?.code, "SESSION_FLOODING");
  assert.match(t.fault!.message, /faster than the runtime's byte-rate cap/);
  assert.equal(t.closed, true);
  assert.equal(got.length, before + 1, "the batch that tipped it was read; nothing after it");
  r.emit("data", event(60));
  assert.equal(got.length, before + 1);
  assert.equal(t.slowed, false, "no resume timer outlives the pipe");
});

Deno.test("PipeTransport with byteRate false reads a flood whole (the control), never pausing", () => {
  const r = new FakeReadable();
  const t = new PipeTransport(new FakeWritable(), r, { byteRate: false });
  let n = 0;
  t.onmessage = () => n++;
  for (let i = 0; i < 100; i++) r.emit("data", event(1_000_000));
  assert.equal(n, 100);
  assert.equal(r.paused, false);
  assert.equal(t.eventBytesRead, 100_000_000);
  assert.ok(t.eventBytesRead > CDP_BYTE_RATE.burstBytes);
  t.close();
});
