import assert from "node:assert/strict";
import { type PipeReadable, PipeTransport, type PipeWritable } from "./pipe_transport.ts";

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
