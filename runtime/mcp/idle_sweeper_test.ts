import assert from "node:assert/strict";
import { until } from "../../tests/helpers/until.ts";
import { Activity, IdleSweeper, sweepEvery } from "./idle_sweeper.ts";

/** A response whose body the test writes and ends. */
function openResponse(): { res: Response; write(text: string): void; end(): void } {
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  const body = new ReadableStream<Uint8Array>({ start: (c) => void (controller = c) });
  return {
    res: new Response(body, { status: 200, headers: { "content-type": "text/event-stream" } }),
    write: (text) => controller.enqueue(new TextEncoder().encode(text)),
    end: () => controller.close(),
  };
}

Deno.test("Activity.idle() counts from construction and from the last touch", () => {
  const a = new Activity(1_000);
  assert.equal(a.idle(1_099, 100), false);
  assert.equal(a.idle(1_100, 100), true);
  a.touch(5_000);
  assert.equal(a.idle(5_050, 100), false, "a request starts the wait anew");
  assert.equal(a.idle(5_100, 100), true);
});

Deno.test("Activity.streaming() keeps a session active until its answer's body ends", async () => {
  const a = new Activity(0);
  const open = openResponse();
  const res = a.streaming(open.res);
  assert.equal(a.idle(Number.MAX_SAFE_INTEGER, 1), false, "a streaming answer is no idleness");
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
  open.write("data: 1\n\n");
  assert.equal((await reader.read()).value, "data: 1\n\n");
  assert.equal(a.idle(Number.MAX_SAFE_INTEGER, 1), false, "still streaming");
  open.end();
  assert.equal((await reader.read()).done, true);
  const ended = Date.now();
  assert.equal(a.idle(ended - 1, 60_000), false, "the end of the answer is activity");
  assert.equal(a.idle(Number.MAX_SAFE_INTEGER, 1), true, "then the session may idle out");
});

Deno.test("Activity.streaming() ends an answer the client cancelled, and only that one", async () => {
  const a = new Activity(0);
  const first = openResponse();
  const second = openResponse();
  const one = a.streaming(first.res);
  const two = a.streaming(second.res);
  await one.body!.cancel();
  assert.equal(a.idle(Number.MAX_SAFE_INTEGER, 1), false, "the second answer still streams");
  second.end();
  await two.text();
  assert.equal(a.idle(Number.MAX_SAFE_INTEGER, 1), true, "both answers over");
});

Deno.test("Activity.streaming() passes status, headers and body through; a bodiless answer as is", async () => {
  const a = new Activity(0);
  const res = a.streaming(
    new Response("hello", { status: 202, statusText: "Accepted", headers: { "x-a": "1" } }),
  );
  assert.equal(res.status, 202);
  assert.equal(res.statusText, "Accepted");
  assert.equal(res.headers.get("x-a"), "1");
  assert.equal(await res.text(), "hello");
  const empty = new Response(null, { status: 204 });
  assert.equal(a.streaming(empty), empty);
  assert.equal(a.idle(Number.MAX_SAFE_INTEGER, 1), true, "nothing left streaming");
});

interface Held {
  name: string;
  activity: Activity;
}

Deno.test("IdleSweeper.sweep() ends exactly the sessions idle at that moment", () => {
  const held: Held[] = [
    { name: "old", activity: new Activity(0) },
    { name: "recent", activity: new Activity(9_950) },
    { name: "streaming", activity: new Activity(0) },
  ];
  held[2].activity.streaming(openResponse().res);
  const ended: string[] = [];
  using sweeper = new IdleSweeper<Held>({
    idleMs: 100,
    sessions: () => held,
    end: (s) => {
      ended.push(s.name);
      held.splice(held.indexOf(s), 1);
    },
  });
  assert.equal(sweeper.sweep(10_000), 1);
  assert.deepEqual(ended, ["old"]);
  assert.equal(sweeper.sweep(10_000), 0, "an ended session is not ended again");
  assert.equal(sweeper.sweep(10_050), 1);
  assert.deepEqual(ended, ["old", "recent"]);
});

Deno.test("IdleSweeper sweeps on its own timer until disposed", async () => {
  const held: Held[] = [{ name: "a", activity: new Activity(0) }];
  const ended: string[] = [];
  const sweeper = new IdleSweeper<Held>({
    idleMs: 1,
    sessions: () => held,
    end: (s) => {
      ended.push(s.name);
      held.splice(held.indexOf(s), 1);
    },
  });
  try {
    await until(() => ended.length === 1); // swept without being asked
  } finally {
    sweeper[Symbol.dispose]();
  }
  held.push({ name: "b", activity: new Activity(0) });
  // Several periods of a live sweeper; a disposed one ends nothing.
  await new Promise((r) => setTimeout(r, sweepEvery(1) * 6));
  assert.deepEqual(ended, ["a"]);
});

Deno.test("sweepEvery() is a quarter of the timeout, between 50 ms and a minute", () => {
  assert.equal(sweepEvery(1), 50);
  assert.equal(sweepEvery(1_000), 250);
  assert.equal(sweepEvery(30 * 60_000), 60_000);
});
