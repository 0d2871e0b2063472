import assert from "node:assert/strict";
import { CdpConnection, type MessageTransport } from "./connection.ts";
import { CdpError, CdpFaultError, CdpLayerError } from "./errors.ts";
import { type PipeReadable, PipeTransport, type PipeWritable } from "./pipe_transport.ts";

/** A transport the test speaks for the browser through; it answers nothing by itself. */
class FakeTransport implements MessageTransport {
  sent: { id: number; method: string; sessionId?: string }[] = [];
  closed = false;
  onmessage: (message: string) => void = () => {};
  onclose: (fault?: CdpFaultError) => void = () => {};
  send(message: string): void {
    this.sent.push(JSON.parse(message));
  }
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.onclose();
  }
  /** Delivers one message text as the browser would. */
  deliver(text: string): void {
    this.onmessage(text);
  }
}

function world() {
  const transport = new FakeTransport();
  const logged: string[] = [];
  const connection = new CdpConnection(transport, { log: (l) => logged.push(l) });
  return { transport, connection, logged };
}

const attach = (sessionId: string, targetId = sessionId) =>
  JSON.stringify({
    method: "Target.attachedToTarget",
    params: {
      sessionId,
      targetInfo: { targetId, type: "page", title: "", url: "", attached: true },
      waitingForDebugger: false,
    },
  });

const code = (err: unknown) => err instanceof CdpLayerError ? err.code : String(err);

Deno.test("CdpConnection ends itself on a message that is not JSON or not of the protocol's shape", async () => {
  for (
    const bad of [
      "{not json",
      "null",
      "5",
      '"text"',
      "[]",
      '{"id":"1"}',
      '{"method":5}',
      '{"method":"Page.loadEventFired","sessionId":7}',
      '{"id":1,"error":"boom"}',
      '{"method":"Target.attachedToTarget"}',
      '{"method":"Target.attachedToTarget","params":{"sessionId":"s"}}',
      '{"method":"Target.detachedFromTarget","params":null}',
    ]
  ) {
    const { transport, connection, logged } = world();
    const pending = connection.root.send("Browser.getVersion");
    transport.deliver(bad);
    await assert.rejects(pending, (err) => code(err) === "CDP_MESSAGE_MALFORMED", bad);
    assert.equal(connection.closed, true, bad);
    assert.equal(connection.fault?.code, "CDP_MESSAGE_MALFORMED");
    assert.equal(transport.closed, true);
    assert.deepEqual(logged, ["connection ended: CDP_MESSAGE_MALFORMED"]);
    // Nothing of the message reaches the log or the error.
    assert.ok(!connection.fault!.message.includes("not json"));
  }
});

Deno.test("CdpConnection: a handler that throws ends its own connection only, and later handlers do not run", async () => {
  const a = world();
  const b = world();
  a.transport.deliver(attach("s1"));
  b.transport.deliver(attach("s1"));
  const pageA = a.connection.session("s1")!;
  const pageB = b.connection.session("s1")!;
  const ran: string[] = [];
  pageA.on("Page.loadEventFired", () => {
    throw new TypeError("injected");
  });
  pageA.on("Page.loadEventFired", () => ran.push("a-after"));
  pageB.on("Page.loadEventFired", () => ran.push("b"));
  const pendingA = pageA.send("Runtime.evaluate", { expression: "1" });
  const waitA = pageA.waitFor("Page.frameNavigated");
  const event = JSON.stringify({ method: "Page.loadEventFired", params: {}, sessionId: "s1" });
  a.transport.deliver(event);
  b.transport.deliver(event);
  await assert.rejects(pendingA, (err) => code(err) === "CDP_LISTENER_FAILED");
  await assert.rejects(waitA, (err) => code(err) === "CDP_CLOSED");
  assert.equal(a.connection.fault?.code, "CDP_LISTENER_FAILED");
  assert.equal(pageA.detached, true);
  assert.deepEqual(ran, ["b"]);
  assert.match(a.logged[0], /^handler of Page\.loadEventFired failed: TypeError at /);
  assert.ok(!a.logged.join("\n").includes("injected"), "the error's message is never logged");
  // The other connection goes on.
  assert.equal(b.connection.closed, false);
  const pendingB = pageB.send("Runtime.evaluate", { expression: "1" });
  const { id } = b.transport.sent.at(-1)!;
  b.transport.deliver(JSON.stringify({ id, result: { ok: 1 }, sessionId: "s1" }));
  assert.deepEqual(await pendingB, { ok: 1 });
});

Deno.test("CdpConnection: a handler whose promise rejects ends its connection (no unhandled rejection)", async () => {
  const { transport, connection } = world();
  const closed = new Promise<void>((r) => connection.onClose(r));
  connection.root.on("Target.targetCreated", async () => {
    await Promise.resolve();
    throw new RangeError("injected");
  });
  transport.deliver(JSON.stringify({ method: "Target.targetCreated", params: {} }));
  await closed;
  assert.equal(connection.fault?.code, "CDP_LISTENER_FAILED");
});

Deno.test("CdpConnection: a handler whose browser call failed is that handler's loss, not a fault", async () => {
  const { transport, connection, logged } = world();
  connection.root.on("Target.targetCreated", () => {
    throw new CdpError("Target.closeTarget", -32000, "No target with given id");
  });
  connection.root.on(
    "Target.targetDestroyed",
    () => Promise.reject(new CdpError("Target.closeTarget", -32000, "gone")),
  );
  transport.deliver(JSON.stringify({ method: "Target.targetCreated", params: {} }));
  transport.deliver(JSON.stringify({ method: "Target.targetDestroyed", params: {} }));
  await new Promise((r) => setTimeout(r, 10));
  assert.equal(connection.closed, false);
  assert.deepEqual(logged, [
    "handler of Target.targetCreated: CDP_PROTOCOL_ERROR",
    "handler of Target.targetDestroyed: CDP_PROTOCOL_ERROR",
  ]);
});

Deno.test("CdpConnection: throwing predicates, detach and close listeners stay where they are", async () => {
  const { transport, connection, logged } = world();
  transport.deliver(attach("s1"));
  const page = connection.session("s1")!;
  // A predicate that throws fails its own wait alone.
  const wait = page.waitFor("Page.loadEventFired", () => {
    throw new TypeError("injected");
  });
  transport.deliver(JSON.stringify({ method: "Page.loadEventFired", params: {}, sessionId: "s1" }));
  await assert.rejects(wait, TypeError);
  assert.equal(connection.closed, false);
  page.onDetach(() => {
    throw new Error("injected");
  });
  connection.onClose(() => {
    throw new Error("injected");
  });
  connection.close();
  // Registered after the end: run in a microtask, still guarded.
  page.onDetach(() => {
    throw new Error("injected late");
  });
  connection.onClose(() => {
    throw new Error("injected late");
  });
  await new Promise((r) => setTimeout(r, 10));
  assert.equal(connection.fault, undefined, "a plain close");
  assert.equal(logged.filter((l) => l.startsWith("close listener failed: Error")).length, 2);
  assert.equal(logged.filter((l) => l.startsWith("detach listener failed: Error")).length, 2);
});

Deno.test("CdpConnection hears a transport's fault: pending calls reject with its code", async () => {
  const { transport, connection } = world();
  const pending = connection.root.send("Browser.getVersion");
  transport.closed = true;
  transport.onclose(new CdpFaultError("CDP_MESSAGE_TOO_LARGE", "over the cap"));
  await assert.rejects(pending, (err) => code(err) === "CDP_MESSAGE_TOO_LARGE");
  assert.equal(connection.fault?.code, "CDP_MESSAGE_TOO_LARGE");
});

Deno.test("CdpConnection over a PipeTransport: a huge message fails the call waiting on it, nothing throws", async () => {
  const listeners: Record<string, ((arg?: unknown) => void)[]> = {};
  const readable: PipeReadable = {
    pause: () => {},
    resume: () => {},
    on(event: string, listener: (arg: never) => void) {
      (listeners[event] ??= []).push(listener as (arg?: unknown) => void);
      return this;
    },
  };
  let ended = false;
  const writable: PipeWritable = {
    write: () => true,
    end: () => ended = true,
    on() {
      return this;
    },
  };
  const emit = (chunk: Uint8Array) => {
    for (const l of listeners.data ?? []) l(chunk);
  };
  const connection = new CdpConnection(
    new PipeTransport(writable, readable, { maxMessageBytes: 4096, log: () => {} }),
    { log: () => {} },
  );
  const call = connection.root.send("Browser.getVersion");
  const head = new TextEncoder().encode('{"id":1,"result":{"product":"');
  emit(head);
  for (let i = 0; i < 10; i++) emit(new Uint8Array(1024).fill(0x61));
  await assert.rejects(call, (err) => code(err) === "CDP_MESSAGE_TOO_LARGE");
  assert.equal(connection.fault?.code, "CDP_MESSAGE_TOO_LARGE");
  assert.equal(ended, true);
  await assert.rejects(connection.root.send("Browser.getVersion"), CdpLayerError);
});
