import assert from "node:assert/strict";
import { addLogFilter } from "../log.ts";
import type { ProxyAnswer, ProxyQuestion } from "../proxy/proxy_protocol.ts";
import { exchange } from "../../tests/helpers/recording_proxy.ts";
import { until } from "../../tests/helpers/until.ts";
import { EgressProxy, MAX_PROXY_LINE, type ProxyJudge, type ProxyProcess } from "./egress_proxy.ts";

const logged: string[] = [];
addLogFilter((line) => {
  logged.push(line);
  return line;
});

/** A proxy process stand-in: the test writes its stdout and reads what the runtime sends. */
function standIn() {
  const stdout = new TransformStream<Uint8Array, Uint8Array>();
  const stdin = new TransformStream<Uint8Array, Uint8Array>();
  let exit!: () => void;
  const status = new Promise<void>((r) => exit = r);
  const process: ProxyProcess = {
    stdin: stdin.writable,
    stdout: stdout.readable,
    status,
    kill: () => exit(),
  };
  const writer = stdout.writable.getWriter();
  const enc = new TextEncoder();
  const say = (text: string) => writer.write(enc.encode(text));
  const received: Record<string, unknown>[] = [];
  (async () => {
    const decoder = new TextDecoder();
    let buffered = "";
    for await (const chunk of stdin.readable) {
      buffered += decoder.decode(chunk, { stream: true });
      let nl: number;
      while ((nl = buffered.indexOf("\n")) >= 0) {
        const m = JSON.parse(buffered.slice(0, nl));
        buffered = buffered.slice(nl + 1);
        received.push(m);
        // A listener asked for opens at once.
        if (m.op === "listen") {
          say(JSON.stringify({ op: "listening", listener: m.listener, port: 40_000 + m.listener }));
          say("\n");
        }
      }
    }
    // Like the real proxy: its stdin closing is its end.
    exit();
  })();
  const answer = async (qid: number): Promise<Record<string, unknown>> => {
    const deadline = Date.now() + 5_000;
    while (Date.now() < deadline) {
      const a = received.find((m) => m.op === "answer" && m.qid === qid);
      if (a) return a;
      await new Promise((r) => setTimeout(r, 5));
    }
    throw new Error(`no answer to question ${qid}`);
  };
  return {
    process,
    say,
    answer,
    async [Symbol.asyncDispose]() {
      exit();
      await writer.close().catch(() => {});
    },
  };
}

const question: ProxyQuestion = { type: "connect", host: "example.test", port: 443 };
const allow: ProxyAnswer = { allow: true, reason: "ALLOWED", exact: false };

/** A judge that records refusals; `ask` and `refused` as given. */
function judge(
  ask: ProxyJudge["ask"],
  refused: ProxyJudge["refused"] = () => {},
): ProxyJudge & { refusals: string[] } {
  const refusals: string[] = [];
  return {
    refusals,
    ask,
    refused(q, reason) {
      refusals.push(reason);
      refused(q, reason);
    },
  };
}

const ask = (qid: number, listener: number) =>
  JSON.stringify({ op: "ask", qid, listener, question }) + "\n";

Deno.test("EgressProxy keeps answering every session when one judge throws, rejects or answers nonsense", async () => {
  await using p = standIn();
  const proxy = EgressProxy.over(p.process);
  const throwsSync = judge(() => {
    throw new TypeError("injected sync");
  });
  const rejects = judge(() => Promise.reject(new RangeError("injected async")));
  const nonsense = judge(() => Promise.resolve(undefined as unknown as ProxyAnswer));
  const fine = judge(() => Promise.resolve(allow));
  const lA = await proxy.listen(throwsSync);
  const lB = await proxy.listen(rejects);
  const lC = await proxy.listen(nonsense);
  const lD = await proxy.listen(fine);
  assert.deepEqual([lA.port, lB.port, lC.port, lD.port], [40_001, 40_002, 40_003, 40_004]);

  await p.say(ask(1, 1) + ask(2, 2) + ask(3, 3) + ask(4, 4));
  const denied = { allow: false, reason: "GATE_ERROR", exact: false };
  assert.deepEqual(await p.answer(1), { op: "answer", qid: 1, ...denied });
  assert.deepEqual(await p.answer(2), { op: "answer", qid: 2, ...denied });
  assert.deepEqual(await p.answer(3), { op: "answer", qid: 3, ...denied });
  assert.deepEqual(await p.answer(4), { op: "answer", qid: 4, ...allow });
  // A judge that failed has its refusal recorded through the session's own `refused`.
  assert.deepEqual(throwsSync.refusals, ["GATE_ERROR"]);
  assert.deepEqual(rejects.refusals, ["GATE_ERROR"]);
  assert.ok(logged.some((l) => /a judge failed: TypeError at /.test(l)));
  assert.ok(!logged.some((l) => l.includes("injected")), "never the error's message");
  // The loop still serves everyone.
  await p.say(ask(5, 4) + ask(6, 1));
  assert.equal((await p.answer(5)).allow, true);
  assert.equal((await p.answer(6)).allow, false);
  await proxy[Symbol.asyncDispose]();
});

Deno.test("EgressProxy skips lines that are not messages and survives a refused handler that throws", async () => {
  await using p = standIn();
  const proxy = EgressProxy.over(p.process);
  let refusedCalls = 0;
  const breaks = judge(() => Promise.resolve(allow), () => {
    refusedCalls++;
    throw new Error("injected");
  });
  const fine = judge(() => Promise.resolve(allow));
  await proxy.listen(breaks);
  await proxy.listen(fine);
  const before = logged.length;
  await p.say(
    [
      "not json at all",
      "null",
      "5",
      "[]",
      '{"op":7}',
      '{"op":"error","message":5}',
      '{"op":"ask","qid":20,"listener":1}',
      '{"op":"refused","listener":1,"question":null,"reason":"UPSTREAM_FAILED"}',
      '{"op":"refused","listener":1}',
      '{"op":"leaf","lid":1,"host":"x.test"}',
      '{"op":"listening"}',
      "",
    ].join("\n") + "\n",
  );
  await p.say(ask(21, 2));
  assert.equal((await p.answer(21)).allow, true);
  // The question without its question is the judge's to answer (here: allow).
  assert.equal((await p.answer(20)).allow, true);
  assert.equal(refusedCalls, 2);
  const lines = logged.slice(before);
  assert.ok(lines.some((l) => l.includes("a line that is not JSON was skipped")), lines.join("\n"));
  assert.ok(lines.some((l) => l.includes("a line that is not a message was skipped")));
  assert.ok(lines.some((l) => l.includes("recording a refusal failed: Error")));
  assert.ok(!lines.some((l) => l.includes("not json at all")), "never the line itself");
  await proxy[Symbol.asyncDispose]();
});

Deno.test("EgressProxy drops a line over MAX_PROXY_LINE as it streams in and reads on after it", async () => {
  await using p = standIn();
  const proxy = EgressProxy.over(p.process);
  await proxy.listen(judge(() => Promise.resolve(allow)));
  const before = logged.length;
  // Half a question, then far too much of it, in pieces, without a newline until the end.
  await p.say('{"op":"ask","qid":30,"listener":1,"question":{"type":"connect","host":"');
  const piece = "a".repeat(1024 * 1024);
  for (let sent = 0; sent <= MAX_PROXY_LINE; sent += piece.length) await p.say(piece);
  await p.say('","port":443}}\n' + ask(31, 1));
  assert.equal((await p.answer(31)).allow, true);
  await new Promise((r) => setTimeout(r, 20));
  const lines = logged.slice(before);
  assert.ok(lines.some((l) => l.includes(`a message over ${MAX_PROXY_LINE} characters`)));
  await proxy[Symbol.asyncDispose]();
});

Deno.test("EgressProxy.mark(): the proxy process releases a listener's upstream waits of requests judged before the mark (504 UPSTREAM_RELEASED, refused), not those judged after, nor another listener's", async () => {
  // An upstream that reads requests and never answers.
  const silent = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const held: Deno.Conn[] = [];
  const accepting = (async () => {
    for await (const conn of silent) held.push(conn);
  })();
  await using proxy = EgressProxy.start();
  const j = judge((q) =>
    Promise.resolve(
      q.type === "http" && q.url.endsWith("/probe")
        ? { allow: false, reason: "ORIGIN_NOT_ALLOWED", exact: false }
        : { allow: true, reason: "ALLOWED", exact: true },
    )
  );
  using listener = await proxy.listen(j);
  // Another session's browser.
  const k = judge(() => Promise.resolve({ allow: true, reason: "ALLOWED", exact: true }));
  using otherListener = await proxy.listen(k);
  const get = (path: string, port = listener.port) =>
    exchange(
      port,
      `GET http://127.0.0.1:${
        (silent.addr as Deno.NetAddr).port
      }${path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`,
    );
  try {
    const old = get("/old");
    let otherDone = false;
    const other = get("/other", otherListener.port).finally(() => otherDone = true);
    await until(() => held.length === 2);
    const mark = proxy.mark(); // a navigation begins
    let youngDone = false;
    const young = get("/young").finally(() => youngDone = true);
    await until(() => held.length === 3);
    listener.releaseWaits(mark);
    const out = await old;
    assert.match(out, /^HTTP\/1\.1 504/);
    assert.match(out, /X-Omotai-Deny: UPSTREAM_RELEASED/);
    await until(() => j.refusals.length >= 1);
    assert.deepEqual(j.refusals, ["UPSTREAM_RELEASED"]);
    // A later round trip through the proxy: the release was long handled, and the request
    // judged after the mark still waits.
    assert.match(await get("/probe"), /ORIGIN_NOT_ALLOWED/);
    assert.equal(youngDone, false, "a request judged after the mark is not released");
    assert.equal(otherDone, false, "another listener's request is not released");
    assert.deepEqual(k.refusals, []);
    listener.releaseWaits(proxy.mark());
    assert.match(await young, /X-Omotai-Deny: UPSTREAM_RELEASED/);
    otherListener.releaseWaits(proxy.mark());
    assert.match(await other, /X-Omotai-Deny: UPSTREAM_RELEASED/);
  } finally {
    silent.close();
    for (const c of held) c.close();
    await accepting.catch(() => {});
  }
});
