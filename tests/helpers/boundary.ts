/**
 * A real `Boundary` over a real policy engine (the bundled baseline module, or the allow-all
 * fixture) and an in-memory database, for the unit tests of what stands on the boundary: the
 * gate, the request guard, the proxy judge, the network log. One setup, so every one of them
 * judges with the same engine, audit and domain rules as production wires them.
 *
 * @module
 */
import type { DatabaseSync } from "node:sqlite";
import { SqliteAuditLog } from "../../runtime/store/sqlite_audit_log.ts";
import { Boundary, type WebSocketRule } from "../../runtime/gate/boundary.ts";
import { SqliteDomainStore } from "../../runtime/store/sqlite_domain_store.ts";
import { PolicyEngine } from "../../runtime/policy/engine.ts";
import { openDatabase } from "../../runtime/store/database.ts";
import { baselineWasm, spec, testModuleWasm } from "./policies.ts";
import { processRedactor } from "../../runtime/redact/mod.ts";

/** What a test boundary is built with. */
export interface TestBoundaryOptions {
  /** The origins the policy lists (`allowed_origins`) and the boundary is told of. */
  allowed: string[];
  /** Policy settings beside `allowed_origins` (e.g. `read_only`); none by default. */
  config?: Record<string, unknown>;
  /** The rule module: the bundled `baseline` (default) or the `allow-all` test fixture. */
  module?: "baseline" | "allow-all";
  /** Whether the boundary keeps domain rules (default true). */
  domains?: boolean;
  /** Whether the boundary writes an audit log (default true). */
  audit?: boolean;
  /** The boundary's search for a guarded credential in a request. */
  secretIn?: (text: string) => boolean;
  /** The policy's WebSocket rule (`read_only` and `websockets:`), as the runtime hands it in. */
  websockets?: WebSocketRule;
}

/** The boundary and what it was built from; disposing it closes them all. */
export interface TestBoundary extends AsyncDisposable {
  boundary: Boundary;
  engine: PolicyEngine;
  /** The in-memory database behind the audit log and the domain rules. */
  db: DatabaseSync;
  /** The audit log, unless `audit: false` (then a log nothing is written to). */
  audit: SqliteAuditLog;
  /** The domain rules, unless `domains: false` (then rules the boundary never reads). */
  domains: SqliteDomainStore;
}

/** Builds a boundary from `options`; `await using` it. */
export async function testBoundary(options: TestBoundaryOptions): Promise<TestBoundary> {
  const allowAll = options.module === "allow-all";
  const wasm = allowAll
    ? await testModuleWasm("tests/fixtures/policies/allow_all.ts")
    : await baselineWasm();
  const engine = await PolicyEngine.create([
    await spec(allowAll ? "allow-all" : "baseline", wasm, {
      allowed_origins: options.allowed,
      ...options.config,
    }),
  ]);
  const db = openDatabase(":memory:");
  const audit = new SqliteAuditLog(db, { redactor: processRedactor() });
  const domains = new SqliteDomainStore(db);
  const boundary = new Boundary({
    engine,
    ...(options.domains === false ? {} : { domains }),
    ...(options.audit === false ? {} : { audit }),
    allowedOrigins: options.allowed,
    ...(options.secretIn ? { secretIn: options.secretIn } : {}),
    ...(options.websockets ? { websockets: options.websockets } : {}),
  });
  return {
    boundary,
    engine,
    db,
    audit,
    domains,
    async [Symbol.asyncDispose]() {
      await engine[Symbol.asyncDispose]();
      db.close();
    },
  };
}
