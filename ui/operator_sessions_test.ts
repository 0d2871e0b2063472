import assert from "node:assert/strict";
import { Hono } from "hono";
import { authenticate, type ConsoleEnv, SESSION_COOKIE } from "./auth.ts";
import { errorAnswer } from "./console_error.ts";
import { FailureLimiter } from "./failure_limiter.ts";
import { loginRoutes } from "./login_routes.ts";
import {
  type OperatorSession,
  OperatorSessions,
  type OperatorSessionStore,
} from "./operator_sessions.ts";

Deno.test("OperatorSessions.touch() finds a live session and ends an idle one", async () => {
  let now = 0;
  const sessions = new OperatorSessions({ idleMs: 1_000, now: () => now });
  const s = await sessions.create();
  assert.match(s.id, /^[A-Za-z0-9_-]{43}$/);
  assert.notEqual(s.csrf, s.id);
  now = 900;
  assert.equal(await sessions.touch(s.id), s);
  assert.equal(s.lastSeen, 900);
  now = 1_800;
  // alive() and peek() do not restart the clock; touch() at 900 did.
  assert.equal(await sessions.alive(s.id), true);
  assert.equal(sessions.peek(s.id), s);
  now = 1_901;
  assert.equal(await sessions.alive(s.id), false);
  assert.equal(sessions.peek(s.id), undefined);
  assert.equal(await sessions.touch(s.id), undefined, "gone for good");
  assert.equal(await sessions.touch(undefined), undefined);
  assert.equal(await sessions.touch("forged"), undefined);
  assert.equal(await sessions.alive(undefined), false);
});

Deno.test("OperatorSessions.create() evicts the least recently used beyond max; end() ends one", async () => {
  const sessions = new OperatorSessions({ max: 2 });
  const a = await sessions.create();
  const b = await sessions.create();
  await sessions.touch(a.id);
  const c = await sessions.create();
  assert.equal(sessions.peek(b.id), undefined);
  assert.equal(sessions.peek(a.id), a);
  assert.equal(await sessions.end(c.id), true);
  assert.equal(await sessions.alive(c.id), false);
  assert.equal(await sessions.end(c.id), true, "ending an ended session is no error");
  sessions.delete(a.id);
  assert.equal(await sessions.touch(a.id), undefined);
});

Deno.test("OperatorSessions: each session has its own CSRF token", async () => {
  const sessions: OperatorSessionStore = new OperatorSessions();
  const [a, b] = [await sessions.create(), await sessions.create()];
  assert.ok(a && b);
  assert.notEqual(a.csrf, b.csrf);
  assert.equal((await sessions.touch(a.id))?.csrf, a.csrf);
});

// --- The login routes and the middleware over the port

const ADMIN = "admin-token-0123456789-0123456789";

/** The login routes and the auth middleware over `sessions`, with one page and one API route. */
function app(sessions: OperatorSessionStore): Hono<ConsoleEnv> {
  const app = new Hono<ConsoleEnv>();
  app.onError((err, c) => {
    const answer = errorAnswer(err);
    for (const [name, value] of Object.entries(answer.headers)) c.header(name, value);
    return c.json({ error: answer.code }, answer.status);
  });
  const limiter = new FailureLimiter();
  app.use("*", authenticate({ adminToken: ADMIN, sessions, limiter }));
  loginRoutes(app, ADMIN, sessions, limiter);
  app.get("/", (c) => c.text("home"));
  app.get("/api/x", (c) => c.json({ ok: true }));
  app.post("/api/x", (c) => c.json({ ok: true }));
  return app;
}

async function login(app: Hono<ConsoleEnv>): Promise<Response> {
  return await app.request("/login", {
    method: "POST",
    body: new URLSearchParams({ token: ADMIN }),
  });
}

function cookieOf(res: Response): string {
  const m = new RegExp(`${SESSION_COOKIE}=([^;]*)`).exec(res.headers.get("set-cookie") ?? "");
  assert.ok(m, "a session cookie is set");
  return `${SESSION_COOKIE}=${m[1]}`;
}

/** A memory store whose answers can be turned off (`down`: undefined/false; `throwing`: throws). */
class FlakyStore implements OperatorSessionStore {
  readonly inner = new OperatorSessions();
  mode: "up" | "down" | "throwing" = "up";
  #gate<T>(fn: () => Promise<T>, down: T): Promise<T> {
    if (this.mode === "throwing") return Promise.reject(new Error("connection refused"));
    return this.mode === "down" ? Promise.resolve(down) : fn();
  }
  create(): Promise<OperatorSession | undefined> {
    return this.#gate(() => this.inner.create(), undefined);
  }
  touch(id: string | undefined): Promise<OperatorSession | undefined> {
    return this.#gate(() => this.inner.touch(id), undefined);
  }
  alive(id: string | undefined): Promise<boolean> {
    return this.#gate(() => this.inner.alive(id), false);
  }
  end(id: string): Promise<boolean> {
    return this.#gate(() => this.inner.end(id), false);
  }
}

Deno.test("login routes over the port: a session shared by two apps on one store, ended by a logout on either", async () => {
  const store = new OperatorSessions();
  const [a, b] = [app(store), app(store)];
  const cookie = cookieOf(await login(a));
  assert.equal((await b.request("/api/x", { headers: { cookie } })).status, 200);
  const csrf = (await store.touch(cookie.split("=")[1]))!.csrf;
  const post = (headers: Record<string, string>) =>
    b.request("/api/x", { method: "POST", headers: { cookie, ...headers } });
  assert.equal((await post({})).status, 403, "a state change needs the session's CSRF token");
  assert.equal((await post({ "x-csrf-token": csrf })).status, 200);
  const out = await b.request("/logout", {
    method: "POST",
    headers: { cookie, "x-csrf-token": csrf },
  });
  assert.equal(out.status, 303);
  assert.equal(out.headers.get("location"), "/login");
  const home = await a.request("/", { headers: { cookie } });
  assert.equal(home.status, 303, "logged out on the other app too");
  assert.equal(home.headers.get("location"), "/login");
});

Deno.test("login routes over the port fail closed: a store that cannot answer is no session (redirect, 401, 503), never a 500", async () => {
  for (const mode of ["down", "throwing"] as const) {
    const store = new FlakyStore();
    const console = app(store);
    const cookie = cookieOf(await login(console));
    const csrf = (await store.inner.touch(cookie.split("=")[1]))!.csrf;
    store.mode = mode;
    const home = await console.request("/", { headers: { cookie } });
    assert.equal(home.status, 303, mode);
    assert.equal(home.headers.get("location"), "/login");
    const api = await console.request("/api/x", { headers: { cookie } });
    assert.equal(api.status, 401, mode);
    const again = await login(console);
    assert.equal(again.status, 503, mode);
    assert.equal((await again.json()).error, "SESSIONS_UNAVAILABLE");
    assert.equal(again.headers.get("set-cookie"), null, "no cookie without a session");
    assert.equal(again.headers.get("retry-after"), "5");
    const out = await console.request("/logout", {
      method: "POST",
      headers: { cookie, "x-csrf-token": csrf },
    });
    assert.equal(out.status, 401, `${mode}: no session to log out of`);
  }
});

Deno.test("logout keeps the cookie and answers 503 when the store could not end the session", async () => {
  const store = new FlakyStore();
  const console = app(store);
  const cookie = cookieOf(await login(console));
  const csrf = (await store.inner.touch(cookie.split("=")[1]))!.csrf;
  // The request's own check passes; the end that follows cannot be recorded.
  store.inner.end = () => Promise.resolve(false);
  const out = await console.request("/logout", {
    method: "POST",
    headers: { cookie, "x-csrf-token": csrf },
  });
  assert.equal(out.status, 503);
  assert.equal(out.headers.get("set-cookie"), null, "the cookie stays: logging out can be retried");
  assert.equal((await console.request("/api/x", { headers: { cookie } })).status, 200);
});
