import assert from "node:assert/strict";
import { testBoundary } from "../../tests/helpers/boundary.ts";
import { spec, testModuleWasm } from "../../tests/helpers/policies.ts";
import { SqliteAuditLog } from "../store/sqlite_audit_log.ts";
import { PolicyEngine } from "../policy/engine.ts";
import type { Facts } from "../policy/facts.ts";
import { openDatabase } from "../store/database.ts";
import { Boundary } from "./boundary.ts";
import type { RequestContext } from "./audit_rows.ts";
import type { HeldWrite, WriteHold } from "./write_hold.ts";
import { processRedactor } from "../redact/mod.ts";

function request(url: string, method = "GET"): Facts {
  const u = new URL(url);
  return {
    abi: 1,
    kind: "request",
    target: { scheme: u.protocol.slice(0, -1), origin: u.origin, path: u.pathname },
    method,
    resource_type: "fetch",
    initiator: "script",
    frame: { top: true, origin: "https://portal.test" },
    form: null,
    element: null,
    session: { tainted: false, actions_used: 0, seconds_elapsed: 0, confirmations_used: 0 },
  };
}

function boundaryWith(
  allowAll: boolean,
  allowed: string[],
  secretIn?: (text: string) => boolean,
) {
  return testBoundary({
    allowed,
    config: { read_only: true },
    module: allowAll ? "allow-all" : "baseline",
    secretIn,
  });
}

const ctx = { session: "s-1", agent: "test", source: "request" as const };
const proxyCtx = { ...ctx, source: "proxy" as const };

Deno.test("Boundary.judgeRequest() needs the exact origin for private addresses, even when a module allows", async () => {
  await using b = await boundaryWith(true, ["http://10.0.0.5:8080"]);
  assert.equal(
    (await b.boundary.judgeRequest(request("http://10.0.0.5:8080/x"), ctx)).decision,
    "allow",
  );
  const lit = await b.boundary.judgeRequest(request("http://10.0.0.6:8080/x"), ctx);
  assert.deepEqual([lit.decision, lit.reason], ["deny", "PRIVATE_ADDRESS"]);
  const localName = await b.boundary.judgeRequest(request("http://printer.localhost/x"), ctx);
  assert.deepEqual([localName.decision, localName.reason], ["deny", "PRIVATE_ADDRESS"]);
  // A public-looking name is allowed here; the proxy looks it up only afterwards and needs
  // an exact listing when the answer is private.
  const named = await b.boundary.judgeRequest(request("http://rebind.test/x"), ctx);
  assert.equal(named.decision, "allow");
  assert.equal(b.boundary.isExactlyAllowed("http://rebind.test"), false);
  assert.equal(b.boundary.isExactlyAllowed("http://10.0.0.5:8080"), true);
  await b.domains.add("http://rebind.test", "allow");
  assert.equal(b.boundary.isExactlyAllowed("http://rebind.test"), true);
  await b.domains.add("http://10.0.0.5:8080", "deny");
  assert.equal(b.boundary.isExactlyAllowed("http://10.0.0.5:8080"), false);
  b.boundary.recordRefusal(request("http://gone.test/"), { ...ctx, source: "proxy" }, "DNS_FAILED");
  assert.deepEqual(
    b.audit.rows().filter((r) => r.source !== "lifecycle").map((r) => r.reason),
    ["OK", "PRIVATE_ADDRESS", "PRIVATE_ADDRESS", "OK", "DNS_FAILED"],
  );
});

Deno.test("Boundary.openHold() hands the hold only writes read_only alone refused, with their bytes", async () => {
  await using b = await boundaryWith(false, ["https://portal.test"]);
  const post = request("https://portal.test/transfer", "POST");
  const body = new TextEncoder().encode("amount=10&to=alice");
  const write: HeldWrite = {
    method: "POST",
    url: "https://portal.test/transfer?x=1",
    contentType: "application/x-www-form-urlencoded",
    body,
  };
  const seen: HeldWrite[] = [];
  const hold: WriteHold = {
    strict: false,
    judge(w) {
      seen.push(w);
      return Promise.resolve({ decision: "allow", reason: "APPROVED", module: "approval" });
    },
  };
  assert.equal(
    (await b.boundary.judgeRequest(post, proxyCtx, { write })).reason,
    "READ_ONLY_WRITE",
  );
  const close = b.boundary.openHold("s-1", hold);
  // The request guard never sees a body: it lets the write on to the proxy, which holds it.
  assert.equal((await b.boundary.judgeRequest(post, ctx)).reason, "HELD_AT_PROXY");
  assert.equal((await b.boundary.judgeRequest(post, proxyCtx, { write })).reason, "APPROVED");
  assert.deepEqual(seen, [write]);
  // Without its bytes a write cannot be shown to anybody.
  assert.equal((await b.boundary.judgeRequest(post, proxyCtx)).reason, "WRITE_UNREADABLE");
  // Another session's writes, a read, and a write refused for more than read_only are not
  // the hold's.
  assert.equal(
    (await b.boundary.judgeRequest(post, { ...proxyCtx, session: "s-2" }, { write })).reason,
    "READ_ONLY_WRITE",
  );
  assert.equal(
    (await b.boundary.judgeRequest(request("https://portal.test/a"), proxyCtx)).reason,
    "OK",
  );
  assert.equal(
    (await b.boundary.judgeRequest(request("https://evil.test/t", "POST"), proxyCtx, { write }))
      .reason,
    "ORIGIN_NOT_ALLOWED",
  );
  await b.domains.add("https://portal.test", "deny");
  assert.equal(
    (await b.boundary.judgeRequest(post, proxyCtx, { write })).reason,
    "DOMAIN_DENIED",
  );
  await b.domains.remove("https://portal.test");
  assert.equal(seen.length, 1);
  close();
  assert.equal(
    (await b.boundary.judgeRequest(post, proxyCtx, { write })).reason,
    "READ_ONLY_WRITE",
  );
  // Every verdict was audited, the hold's included.
  const reasons = b.audit.rows().filter((r) => r.kind === "request").map((r) => r.reason);
  assert.ok(reasons.includes("APPROVED") && reasons.includes("HELD_AT_PROXY"));
});

Deno.test("Boundary.openHold(): a strict hold (a login) decides writes the policy allows too", async () => {
  await using b = await boundaryWith(true, ["https://portal.test"]);
  const post = request("https://portal.test/login", "POST");
  const write: HeldWrite = {
    method: "POST",
    url: "https://portal.test/login",
    contentType: null,
    body: new Uint8Array(),
  };
  assert.equal((await b.boundary.judgeRequest(post, proxyCtx, { write })).reason, "OK");
  const close = b.boundary.openHold("s-1", {
    strict: true,
    judge: () => Promise.resolve({ decision: "deny", reason: "LOGIN_WRITE_MISMATCH" }),
  });
  assert.equal(
    (await b.boundary.judgeRequest(post, proxyCtx, { write })).reason,
    "LOGIN_WRITE_MISMATCH",
  );
  // Reads are never a hold's.
  assert.equal(
    (await b.boundary.judgeRequest(request("https://portal.test/"), proxyCtx)).reason,
    "OK",
  );
  close();
  assert.equal((await b.boundary.judgeRequest(post, proxyCtx, { write })).reason, "OK");
});

Deno.test("Boundary audits a request it cannot record as a deny (AUDIT_UNAVAILABLE)", async () => {
  await using engine = await PolicyEngine.create([]);
  const dir = await Deno.makeTempDir();
  const db = openDatabase(`${dir}/o.db`);
  const audit = new SqliteAuditLog(db, { redactor: processRedactor() });
  // The database goes away under the log: the row cannot be written.
  db.close();
  const broken = new Boundary({ engine, audit, allowedOrigins: [] });
  const j = await broken.judgeRequest(request("https://portal.test/"), ctx);
  assert.deepEqual([j.decision, j.reason], ["deny", "AUDIT_UNAVAILABLE"]);
  await Deno.remove(dir, { recursive: true });
});

Deno.test("Boundary audits a trapped policy module as a POLICY_ERROR deny", async () => {
  const dir = await Deno.makeTempDir();
  const db = openDatabase(`${dir}/o.db`);
  try {
    const wasm = await testModuleWasm("tests/fixtures/policies/trap.ts");
    await using engine = await PolicyEngine.create([await spec("trap", wasm, {})]);
    const audit = new SqliteAuditLog(db, { redactor: processRedactor() });
    const boundary = new Boundary({ engine, audit, allowedOrigins: ["https://portal.test"] });
    const j = await boundary.judgeRequest(request("https://portal.test/x"), ctx);
    assert.deepEqual([j.decision, j.reason, j.module], ["deny", "POLICY_ERROR", "trap"]);
    const row = audit.rows().at(-1)!;
    assert.deepEqual([row.decision, row.reason, row.module], ["deny", "POLICY_ERROR", "trap"]);
    const action = await boundary.judge({ ...request("https://portal.test/x"), kind: "navigate" });
    assert.equal(action.reason, "POLICY_ERROR");
  } finally {
    db.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("proxyJudge().refused() audits what the proxy refused on its own, even an unreadable request", async () => {
  const { proxyJudge } = await import("../egress/proxy_judge.ts");
  await using b = await boundaryWith(false, ["https://portal.test"]);
  const judge = proxyJudge({
    boundary: b.boundary,
    session: () => ({ id: "s-1", agent: "test" }),
    counters: () => ({
      actionsUsed: 0,
      secondsElapsed: 0,
      confirmationsUsed: 0,
      tainted: false,
    }),
  });
  judge.refused({ type: "malformed" }, "BAD_REQUEST");
  judge.refused(
    { type: "http", method: "POST", url: "https://portal.test/up?secret=1" },
    "CHUNKED_REFUSED",
  );
  judge.refused({ type: "connect", host: "portal.test", port: 443 }, "UPSTREAM_UNREACHABLE");
  const rows = b.audit.rows().map((r) => [r.source, r.decision, r.reason, r.origin, r.method]);
  assert.deepEqual(rows, [
    ["proxy", "deny", "BAD_REQUEST", null, "UNKNOWN"],
    ["proxy", "deny", "CHUNKED_REFUSED", "https://portal.test", "POST"],
    ["proxy", "deny", "UPSTREAM_UNREACHABLE", "https://portal.test", "CONNECT"],
  ]);
});

Deno.test("Boundary.reserve() denies the runtime's own origins whatever the policy allows", async () => {
  await using b = await boundaryWith(true, ["http://127.0.0.1:8080"]);
  assert.equal(
    (await b.boundary.judgeRequest(request("http://127.0.0.1:8080/api"), ctx)).decision,
    "allow",
  );
  b.boundary.reserve(["http://127.0.0.1:8080", "http://localhost:8080"]);
  for (const url of ["http://127.0.0.1:8080/api/approvals", "http://localhost:8080/"]) {
    const j = await b.boundary.judgeRequest(request(url, "POST"), ctx);
    assert.deepEqual([j.decision, j.reason], ["deny", "RUNTIME_ORIGIN"], url);
  }
  const action = await b.boundary.judge({ ...request("http://127.0.0.1:8080/"), kind: "navigate" });
  assert.equal(action.reason, "RUNTIME_ORIGIN");
  // Another port of the same host is not the runtime's (it is judged as ever).
  const other = await b.boundary.judgeRequest(request("http://127.0.0.1:8081/"), ctx);
  assert.notEqual(other.reason, "RUNTIME_ORIGIN");
});

Deno.test("Boundary.judgeRequest() lets a guarded credential leave only as the login hold's submission", async () => {
  const SECRET = "hunter2hunter2";
  let broken = false;
  const secretIn = (t: string) => {
    if (broken) throw new Error("redactor failed");
    return t.toLowerCase().includes(SECRET);
  };
  await using b = await boundaryWith(true, ["https://portal.test"], secretIn);
  const get = (url: string): [Facts, HeldWrite] => [request(url), {
    method: "GET",
    url,
    contentType: null,
    body: new Uint8Array(),
  }];
  const reason = async ([f, w]: [Facts, HeldWrite], c: RequestContext = proxyCtx) =>
    (await b.boundary.judgeRequest(f, c, { write: w })).reason;
  // Reads and writes, to any origin the policy allows, in the query, the host or the body.
  assert.equal(await reason(get(`https://portal.test/p?x=${SECRET}`)), "SECRET_IN_REQUEST");
  assert.equal(await reason(get(`https://${SECRET}.portal.test/`)), "SECRET_IN_REQUEST");
  const [pf, pw] = get("https://portal.test/save");
  const post: [Facts, HeldWrite] = [{ ...pf, method: "POST" }, {
    ...pw,
    method: "POST",
    body: new TextEncoder().encode(`note=${SECRET.toUpperCase()}`),
  }];
  assert.equal(await reason(post), "SECRET_IN_REQUEST");
  assert.equal(await reason(get("https://portal.test/p?x=plain")), "OK");
  // The login's strict hold decides it (its exact submission passes); the guard defers.
  const close = b.boundary.openHold("s-1", {
    strict: true,
    judge: () => Promise.resolve({ decision: "allow", reason: "LOGIN_SUBMIT" }),
  });
  assert.equal(await reason(post), "LOGIN_SUBMIT");
  assert.equal(await reason(post, ctx), "HELD_AT_PROXY");
  close();
  // A check that fails refuses.
  broken = true;
  assert.equal(await reason(get("https://portal.test/p?x=plain")), "SECRET_IN_REQUEST");
});

Deno.test("Boundary.confine() refuses every request of the session to another origin, any method, until released", async () => {
  await using b = await boundaryWith(true, ["https://vendor.test", "https://elsewhere.test"]);
  const release = b.boundary.confine("s-1", ["https://vendor.test", "https://api.vendor.test"]);
  assert.equal(
    (await b.boundary.judgeRequest(request("https://vendor.test/a"), ctx)).decision,
    "allow",
  );
  for (const method of ["GET", "POST", "HEAD"]) {
    const d = await b.boundary.judgeRequest(request("https://elsewhere.test/x", method), ctx);
    assert.deepEqual([d.decision, d.reason], ["deny", "CAPTURE_ORIGIN_NOT_NAMED"], method);
  }
  // A tunnel that may be either origin keeps only the confined alternative.
  const either = await b.boundary.judgeRequest(
    [request("https://elsewhere.test/"), request("https://vendor.test/")],
    proxyCtx,
  );
  assert.equal(either.decision, "allow");
  // Another session is not confined.
  const other = await b.boundary.judgeRequest(request("https://elsewhere.test/x"), {
    ...ctx,
    session: "s-2",
  });
  assert.equal(other.decision, "allow");
  release();
  assert.equal(
    (await b.boundary.judgeRequest(request("https://elsewhere.test/x"), ctx)).decision,
    "allow",
  );
});

/** A WebSocket handshake as the proxy holds it (`Sec-Fetch-Mode: websocket`, or `Upgrade`). */
function handshake(url: string): [Facts, HeldWrite] {
  return [request(url), {
    method: "GET",
    url,
    contentType: null,
    body: new Uint8Array(),
    mode: "websocket",
  }];
}

Deno.test("Boundary.judgeRequest() refuses a WebSocket under read_only unless websockets: lists its origin", async () => {
  await using b = await testBoundary({
    allowed: ["https://portal.test", "http://127.0.0.1:8081"],
    config: { read_only: true },
    module: "allow-all",
    websockets: { readOnly: true, allowed: ["https://portal.test"] },
  });
  const judge = async (url: string, upgrade?: string, mode = true) => {
    const [f, w] = handshake(url);
    const write = mode ? w : { ...w, mode: undefined };
    return await b.boundary.judgeRequest(f, proxyCtx, {
      write,
      ...(upgrade ? { upgrade } : {}),
    });
  };
  // wss: is the https origin the key lists; ws: the http one.
  assert.equal((await judge("wss://portal.test/chat")).reason, "OK");
  const refused = await judge("ws://127.0.0.1:8081/chat");
  assert.deepEqual([refused.decision, refused.reason, refused.module], [
    "deny",
    "WEBSOCKET_REFUSED",
    "runtime",
  ]);
  // Told by the Upgrade header alone (no Sec-Fetch-Mode, plain http).
  assert.equal(
    (await judge("http://127.0.0.1:8081/chat", "websocket", false)).reason,
    "WEBSOCKET_REFUSED",
  );
  // The same URL as a plain read is judged by the policy as ever.
  assert.equal((await judge("http://127.0.0.1:8081/chat", undefined, false)).reason, "OK");
  // Each verdict is audited once, by the boundary.
  assert.deepEqual(
    b.audit.rows().filter((r) => r.kind === "request").map((r) => r.reason),
    ["OK", "WEBSOCKET_REFUSED", "WEBSOCKET_REFUSED", "OK"],
  );
});

Deno.test("Boundary.judgeRequest() opens no WebSocket during a strict hold, without asking the hold", async () => {
  await using b = await testBoundary({
    allowed: ["https://portal.test"],
    module: "allow-all",
    // Listed for sockets and not read_only: only the hold refuses it.
    websockets: { readOnly: false, allowed: ["https://portal.test"] },
  });
  const asked: string[] = [];
  const close = b.boundary.openHold("s-1", {
    strict: true,
    judge: (w) => {
      asked.push(w.url);
      return Promise.resolve({ decision: "allow", reason: "LOGIN_SUBMIT" });
    },
  });
  const [f, w] = handshake("wss://portal.test/chat?u=x");
  const d = await b.boundary.judgeRequest(f, proxyCtx, { write: w, upgrade: "websocket" });
  assert.deepEqual([d.decision, d.reason], ["deny", "LOGIN_WRITE_MISMATCH"]);
  assert.deepEqual(asked, [], "a handshake is never offered to the hold as a GET submission");
  close();
  assert.equal((await b.boundary.judgeRequest(f, proxyCtx, { write: w })).reason, "OK");
});

Deno.test("Boundary.judgeRequest() lets a read through on a guard ticket once, but never past a confinement or with a credential", async () => {
  const SECRET = "hunter2-secret";
  await using b = await testBoundary({
    allowed: ["https://vendor.test", "https://elsewhere.test"],
    module: "allow-all",
    secretIn: (t) => t.includes(SECRET),
  });
  const taken: string[] = [];
  const tickets = {
    take(method: string, url: string) {
      taken.push(`${method} ${url}`);
      return true;
    },
  };
  const read = (url: string) =>
    b.boundary.judgeRequest(request(url), proxyCtx, {
      write: { method: "GET", url, contentType: null, body: new Uint8Array() },
      tickets,
    });
  const rows = () => b.audit.rows().filter((r) => r.kind === "request").map((r) => r.reason);
  // On a ticket: allowed, and the guard's row stands for it.
  assert.equal((await read("https://elsewhere.test/a")).reason, "OK");
  assert.deepEqual(rows(), []);
  // A credential in the URL is never let through on a ticket.
  assert.equal((await read(`https://elsewhere.test/?k=${SECRET}`)).reason, "SECRET_IN_REQUEST");
  // A confinement that began after the guard's verdict refuses what the ticket names.
  const release = b.boundary.confine("s-1", ["https://vendor.test"]);
  assert.equal((await read("https://elsewhere.test/b")).reason, "CAPTURE_ORIGIN_NOT_NAMED");
  release();
  assert.deepEqual(taken, ["GET https://elsewhere.test/a"]);
  assert.deepEqual(rows(), ["SECRET_IN_REQUEST", "CAPTURE_ORIGIN_NOT_NAMED"]);
});
