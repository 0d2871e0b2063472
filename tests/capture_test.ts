/**
 * Generated-credential capture end to end: a runtime with the policy's templates drives a real
 * Chromium through a fake GitHub (manifest flow) and a fake Linear (registration form), both
 * over HTTPS with a test CA, and writes what they mint into the vault under capture grants.
 * Every refusal submits and writes nothing; a forged callback converts nothing; a capture into
 * targets another session is capturing into is refused `CAPTURE_IN_PROGRESS` without
 * contacting the vendor, and two started at once make the vendor register one app; and no
 * minted value reaches the MCP stream, the log, the audit, the database's bytes or the
 * console, in any encoding.
 */
import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { rawKeySource, Vault } from "../vault/mod.ts";
import { databasePath, openDatabase } from "../runtime/store/database.ts";
import { GITHUB_CALLBACK_PATH } from "../runtime/capture/github_app.ts";
import { startTestRuntime, type TestClient } from "./helpers/harness.ts";
import {
  AgentClients,
  assertNoLeak,
  captureGrants,
  captureLogs,
  capturePolicy,
  type CaptureWorkflow,
  consolePages,
  dashed,
  GITHUB_OUTPUTS,
  holdConversions,
  LINEAR_OUTPUTS,
  mintedSecrets,
  newVaultKey,
  revealSecret,
  sqliteGrants,
  storedPlaces,
} from "./helpers/capture_world.ts";
import {
  type FakeGithubOptions,
  type FakeLinearOptions,
  serveFakeGithub,
  serveFakeLinear,
} from "./fixtures/capture_vendors.ts";

const KEY = newVaultKey();

Deno.test("browser_capture_credentials: both workflows, every refusal, a race and the leak search", async (t) => {
  const { logs, restore } = captureLogs();
  const ghOptions: FakeGithubOptions = {};
  const linOptions: FakeLinearOptions = {};
  await using github = await serveFakeGithub(ghOptions);
  await using linear = await serveFakeLinear(linOptions);
  const attackerHits: string[] = [];
  const attacker = Deno.serve({ hostname: "127.0.0.2", port: 0, onListen: () => {} }, (req) => {
    attackerHits.push(`${req.method} ${new URL(req.url).pathname}${new URL(req.url).search}`);
    return new Response("ok");
  });
  const dataDir = await Deno.makeTempDir({ prefix: "omotai-capture-" });
  const db = openDatabase(databasePath(dataDir));
  {
    using vault = await Vault.open(db, rawKeySource(KEY));
    await vault.add("placeholder", "generic", "not-a-minted-value-0000");
  }
  const grants = sqliteGrants(db);
  const policy = capturePolicy({
    github,
    linear,
    name: "Omotai capture test",
    permissions: { issues: "write" },
  });
  const runtime = await startTestRuntime(dataDir, policy, {
    vaultKey: { key: KEY },
    upstreamCa: [github.caPem, linear.caPem],
  });
  const key = (await runtime.agents.add("alice")).key;
  const clients = new AgentClients("capture-test");
  const connect = () => clients.connect(runtime, key);
  /** One approved capture grant per output into fresh (or given) secret ids. */
  const grant = captureGrants(grants, {
    origins: { github_app: github.origin, linear_oauth_app: linear.origin },
    purpose: "capture test",
    prefix: "cap",
  });
  const reveal = (id: string) => revealSecret(db, KEY, id);
  const auditRows = () => {
    const r = new DatabaseSync(databasePath(dataDir), { readOnly: true });
    try {
      return r.prepare("SELECT kind, decision, reason, rule FROM audit ORDER BY seq").all() as {
        kind: string;
        decision: string;
        reason: string;
        rule: string | null;
      }[];
    } finally {
      r.close();
    }
  };
  const capture = async (workflow: CaptureWorkflow, ids: Record<string, string>) => {
    const c = await connect();
    return await c.call("browser_capture_credentials", { workflow, outputs: ids });
  };
  /**
   * The one session the captures that need no fresh one run in (a browser per capture would
   * cost a launch each): the refusals before the vendor, the failures the fake vendors' plain
   * pages cause (a forged state, a callback elsewhere, a changed layout), and the second
   * session of each race. Each names its own outcome and its own count of what the vendor
   * saw, and a tainted session still captures and reports (tests/capture_attack_test.ts;
   * here the Linear answer-changed case mints in it), so nothing an earlier capture left in
   * it can make a later one pass. The two workflows' first captures run in fresh sessions (the
   * first proves the taint from the start), and so does the first of each race. Opened by the
   * first refusal.
   */
  let shared: Promise<TestClient> | undefined;
  const sharedCapture = async (workflow: CaptureWorkflow, ids: Record<string, string>) => {
    shared ??= connect();
    return await (await shared).call("browser_capture_credentials", { workflow, outputs: ids });
  };
  /** What the vendor has seen of submissions so far. */
  const submitted = () =>
    github.requests.filter((r) => r.startsWith("POST")).length +
    linear.requests.filter((r) => r.startsWith("POST")).length;

  try {
    await t.step(
      "github_app: the manifest flow writes pem, client_secret and webhook_secret",
      async () => {
        const { ids, targets } = await grant("github_app", GITHUB_OUTPUTS);
        const out = await capture("github_app", ids);
        assert.equal(out.isError, false, out.text);
        assert.match(out.text, /CAPTURE_DONE/);
        for (const o of GITHUB_OUTPUTS) assert.ok(out.text.includes(targets[o]), out.text);
        assert.equal(github.minted.length, 1);
        assert.equal(github.conversions, 1);
        const app = github.minted[0];
        assert.equal(await reveal(targets.pem), app.pem);
        assert.equal(await reveal(targets.client_secret), app.client_secret);
        assert.equal(await reveal(targets.webhook_secret), app.webhook_secret);
        // The manifest is the operator's template with the runtime's own callback.
        const manifest = github.manifests[0] as Record<string, unknown>;
        assert.equal(manifest.name, "Omotai capture test");
        assert.equal(manifest.redirect_url, `${github.origin}${GITHUB_CALLBACK_PATH}`);
        assert.equal(github.callbacks.length, 1);
        for (const id of Object.values(ids)) {
          assert.equal((await grants.get(id))?.state, "used");
        }
        // Tainted from the start: the page is not the model's to read any more.
        const c = clients.all.at(-1)!;
        const nav = await c.call("browser_navigate", { url: github.origin });
        assert.equal(nav.isError, true);
        assert.match(nav.text, /SESSION_TAINTED/);
        const rows = auditRows().filter((r) => r.kind === "capture");
        assert.ok(rows.some((r) => r.reason === "CAPTURE_DONE"));
        assert.equal(rows.filter((r) => r.reason === "CAPTURE_WRITTEN").length, 3);
      },
    );

    await t.step(
      "linear_oauth_app: the registration writes client_id and client_secret",
      async () => {
        const { ids, targets } = await grant("linear_oauth_app", LINEAR_OUTPUTS);
        const out = await capture("linear_oauth_app", ids);
        assert.equal(out.isError, false, out.text);
        assert.equal(linear.minted.length, 1);
        const app = linear.minted[0];
        assert.equal(await reveal(targets.client_id), app.client_id);
        assert.equal(await reveal(targets.client_secret), app.client_secret);
        assert.deepEqual(linear.submissions[0], {
          name: "Omotai capture test",
          developer: "Omotai",
          developerUrl: "https://example.test",
          description: "Registered by the runtime",
          redirectUris: "https://example.test/callback",
        });
      },
    );

    /** A refusal before anything is minted: nothing submitted, nothing written. */
    const refused = async (
      workflow: CaptureWorkflow,
      ids: Record<string, string>,
      targets: Record<string, string>,
      code: RegExp,
    ) => {
      const before = submitted();
      const out = await sharedCapture(workflow, ids);
      assert.equal(out.isError, true, out.text);
      assert.match(out.text, code);
      assert.match(out.text, /nothing (was )?(submitted|written)/);
      assert.equal(submitted(), before, "nothing was submitted");
      for (const id of Object.values(targets)) {
        if (id !== "placeholder") assert.equal(Vault.has(db, id), false, `${id} stays empty`);
      }
    };

    await t.step("no approved grant: GRANT_NOT_FOUND, nothing submitted", async () => {
      await refused(
        "github_app",
        { pem: "g_nosuchgrant0001", client_secret: "g_nosuch2", webhook_secret: "g_nosuch3" },
        {},
        /GRANT_NOT_FOUND/,
      );
    });

    await t.step("a grant pending approval: GRANT_PENDING", async () => {
      const { ids, targets } = await grant("github_app", GITHUB_OUTPUTS);
      const pending = await grants.add({
        secret_id: "cap-pending-pem",
        agent: "alice",
        purpose: "pending",
        mode: "once",
        uses: [{
          kind: "capture",
          allowed_origins: [github.origin],
          workflow: "github_app",
          output: "pem",
        }],
      });
      await refused("github_app", { ...ids, pem: pending.id }, targets, /GRANT_PENDING/);
    });

    await t.step("grants for another origin: GRANT_WRONG_ORIGIN", async () => {
      const { ids, targets } = await grant("github_app", GITHUB_OUTPUTS, { origin: linear.origin });
      await refused("github_app", ids, targets, /GRANT_WRONG_ORIGIN/);
    });

    await t.step("a mismatched output (two grants swapped): GRANT_WRONG_OUTPUT", async () => {
      const { ids, targets } = await grant("github_app", GITHUB_OUTPUTS);
      await refused(
        "github_app",
        { ...ids, pem: ids.client_secret, client_secret: ids.pem },
        targets,
        /GRANT_WRONG_OUTPUT/,
      );
    });

    await t.step("a grant of the other workflow: GRANT_WRONG_WORKFLOW", async () => {
      // Bound to Linear's origin: only the workflow is wrong.
      const gh = await grant("github_app", GITHUB_OUTPUTS, { origin: linear.origin });
      const lin = await grant("linear_oauth_app", LINEAR_OUTPUTS);
      await refused(
        "linear_oauth_app",
        { client_id: lin.ids.client_id, client_secret: gh.ids.client_secret },
        lin.targets,
        /GRANT_WRONG_WORKFLOW/,
      );
    });

    await t.step("outputs that are not the workflow's: CAPTURE_OUTPUTS", async () => {
      const { ids, targets } = await grant("github_app", GITHUB_OUTPUTS);
      const { webhook_secret: _, ...two } = ids;
      await refused("github_app", two, targets, /CAPTURE_OUTPUTS/);
      await refused("github_app", { ...ids, client_id: ids.pem }, targets, /CAPTURE_OUTPUTS/);
    });

    await t.step(
      "an occupied target: CAPTURE_TARGET_OCCUPIED, the value there unchanged",
      async () => {
        const { ids, targets } = await grant("github_app", GITHUB_OUTPUTS);
        {
          using vault = await Vault.open(db, rawKeySource(KEY));
          await vault.add(targets.webhook_secret, "generic", "already-here-value-123");
        }
        await refused(
          "github_app",
          ids,
          { pem: targets.pem, client_secret: targets.client_secret },
          /CAPTURE_TARGET_OCCUPIED/,
        );
        assert.equal(await reveal(targets.webhook_secret), "already-here-value-123");
      },
    );

    await t.step("one of three grants expired: GRANT_EXPIRED", async () => {
      const { ids, targets } = await grant("github_app", GITHUB_OUTPUTS);
      const short = await grant("github_app", ["client_secret"], {
        expires: new Date(Date.now() + 1_000).toISOString(),
      });
      await new Promise((r) => setTimeout(r, 1_300));
      await refused(
        "github_app",
        { ...ids, client_secret: short.ids.client_secret },
        { ...targets, extra: short.targets.client_secret },
        /GRANT_EXPIRED/,
      );
    });

    await t.step("a forged callback state: CAPTURE_STATE_MISMATCH, no conversion", async () => {
      const { ids, targets } = await grant("github_app", GITHUB_OUTPUTS);
      const conversions = github.conversions;
      ghOptions.forgeState = "forged-state-0123456789";
      try {
        const out = await sharedCapture("github_app", ids);
        assert.equal(out.isError, true);
        assert.match(out.text, /CAPTURE_STATE_MISMATCH/);
      } finally {
        delete ghOptions.forgeState;
      }
      assert.equal(github.conversions, conversions);
      for (const id of Object.values(targets)) assert.equal(Vault.has(db, id), false);
      for (const id of Object.values(ids)) assert.equal((await grants.get(id))?.state, "active");
    });

    await t.step(
      "a callback to another origin: CAPTURE_CALLBACK_REFUSED, the code never leaves",
      async () => {
        const { ids, targets } = await grant("github_app", GITHUB_OUTPUTS);
        const conversions = github.conversions;
        ghOptions.callbackOrigin = `https://127.0.0.2:${attacker.addr.port}`;
        try {
          const out = await sharedCapture("github_app", ids);
          assert.equal(out.isError, true);
          assert.match(out.text, /CAPTURE_CALLBACK_REFUSED/);
        } finally {
          delete ghOptions.callbackOrigin;
        }
        assert.equal(github.conversions, conversions);
        assert.deepEqual(attackerHits, [], "the attacker's origin received nothing");
        for (const id of Object.values(targets)) assert.equal(Vault.has(db, id), false);
      },
    );

    await t.step(
      "a changed layout: CAPTURE_PAGE_UNEXPECTED, nothing minted or written",
      async () => {
        const gh = await grant("github_app", GITHUB_OUTPUTS);
        const minted = github.minted.length;
        ghOptions.layout = "changed";
        try {
          const out = await sharedCapture("github_app", gh.ids);
          assert.match(out.text, /CAPTURE_PAGE_UNEXPECTED/);
        } finally {
          delete ghOptions.layout;
        }
        assert.equal(github.minted.length, minted);
        for (const id of Object.values(gh.targets)) assert.equal(Vault.has(db, id), false);

        const lin = await grant("linear_oauth_app", LINEAR_OUTPUTS);
        const submissions = linear.submissions.length;
        linOptions.layout = "changed";
        try {
          const out = await sharedCapture("linear_oauth_app", lin.ids);
          assert.match(out.text, /CAPTURE_PAGE_UNEXPECTED/);
        } finally {
          delete linOptions.layout;
        }
        assert.equal(linear.submissions.length, submissions, "the form was not submitted");
        // The vendor minted but the answer page is not the expected one: nothing is written.
        linOptions.layout = "answer-changed";
        try {
          const out = await sharedCapture("linear_oauth_app", lin.ids);
          assert.match(out.text, /CAPTURE_PAGE_UNEXPECTED/);
        } finally {
          delete linOptions.layout;
        }
        assert.equal(linear.minted.length, submissions + 1);
        for (const id of Object.values(lin.targets)) assert.equal(Vault.has(db, id), false);
      },
    );

    await t.step(
      "a capture into targets another capture is minting into: CAPTURE_IN_PROGRESS, the vendor contacted zero times",
      async () => {
        // Two sessions of one runtime; the second's targets overlap the first's in one place.
        const a = await grant("github_app", GITHUB_OUTPUTS, {
          target: (o) => o === "pem" ? "race-pem" : `race-a-${dashed(o)}`,
        });
        const b = await grant("github_app", GITHUB_OUTPUTS, {
          target: (o) => o === "pem" ? "race-pem" : `race-b-${dashed(o)}`,
        });
        const minted = github.minted.length;
        const manifests = github.manifests.length;
        const hold = holdConversions(ghOptions);
        let first;
        try {
          first = capture("github_app", a.ids);
          // The first holds its lease and the vendor minted its app.
          await Promise.race([
            hold.reached,
            first.then((o) => assert.fail(`the first capture ended early: ${o.text}`)),
          ]);
          const seen = github.requests.length;
          const second = await sharedCapture("github_app", b.ids);
          assert.equal(second.isError, true, second.text);
          assert.match(
            second.text,
            /^error: CAPTURE_IN_PROGRESS \(capture: CAPTURE_IN_PROGRESS \(another capture is writing into race-pem; nothing was submitted/,
          );
          assert.equal(
            github.requests.length,
            seen,
            "the second capture contacted the vendor zero times",
          );
          assert.equal(github.manifests.length, manifests + 1, "one manifest posted");
        } finally {
          hold.open();
        }
        const done = await first;
        assert.equal(done.isError, false, done.text);
        assert.equal(github.minted.length, minted + 1, "the vendor registered exactly one app");
        assert.equal(await reveal("race-pem"), github.minted[minted].pem);
        for (const o of ["client_secret", "webhook_secret"]) {
          assert.equal(Vault.has(db, b.targets[o]), false, "the refused capture wrote nothing");
        }
        for (const id of Object.values(b.ids)) {
          assert.equal((await grants.get(id))?.state, "active");
        }
        const refusal = auditRows().find((r) => r.reason === "CAPTURE_IN_PROGRESS");
        assert.ok(refusal, "the refusal is audited");
        assert.equal(refusal.decision, "deny");
        assert.match(
          refusal.rule ?? "",
          /^race-pem held by session \S+ on runtime-[0-9a-f]{8} until /,
        );
        // The lease went with the first capture: the targets are free again (the vault's
        // occupied target is what refuses now, before any vendor is contacted).
        const again = await sharedCapture("github_app", b.ids);
        assert.match(again.text, /CAPTURE_TARGET_OCCUPIED/);
        assert.equal(github.minted.length, minted + 1);
      },
    );

    await t.step(
      "two sessions starting captures into the same empty targets at once: the vendor registers one app",
      async () => {
        const targets = (o: string) => `both-${dashed(o)}`;
        const a = await grant("github_app", GITHUB_OUTPUTS, { target: targets });
        const b = await grant("github_app", GITHUB_OUTPUTS, { target: targets });
        const minted = github.minted.length;
        const manifests = github.manifests.length;
        const outs = await Promise.all([
          capture("github_app", a.ids),
          sharedCapture("github_app", b.ids),
        ]);
        const texts = outs.map((o) => o.text).join("\n");
        const done = outs.filter((o) => !o.isError);
        const refused = outs.filter((o) => o.isError);
        assert.equal(done.length, 1, texts);
        assert.equal(refused.length, 1, texts);
        // Refused before the vendor: while the winner ran (its lease), or after it wrote (the
        // check finds the targets occupied).
        assert.match(refused[0].text, /^error: (CAPTURE_IN_PROGRESS|CAPTURE_TARGET_OCCUPIED) /);
        assert.equal(github.manifests.length, manifests + 1, "one manifest posted");
        assert.equal(github.minted.length, minted + 1, "the vendor registered exactly one app");
        assert.equal(await reveal(targets("pem")), github.minted[minted].pem);
      },
    );

    await t.step("the leak search: no minted value anywhere, in any encoding", async () => {
      const pages = await consolePages(runtime, runtime.adminToken, [
        "/api/sessions",
        "/api/audit",
        "/api/grants",
        "/api/audit/export",
      ]);
      assertNoLeak({
        values: mintedSecrets([...github.minted, ...linear.minted]),
        places: [
          ["the MCP stream", clients.stream()],
          ["the log", logs.join("\n")],
          ...await storedPlaces(dataDir),
          ["the console", pages.join("\n")],
        ],
        atLeast: 10,
      });
      // The console shows each capture's outcome beside its session, and its steps as rows.
      assert.match(pages[0], /capture github_app: CAPTURE_DONE/);
      assert.match(pages[0], /capture linear_oauth_app: CAPTURE_DONE/);
      assert.match(pages[1], /CAPTURE_STEP/);
    });
  } finally {
    restore();
    await clients[Symbol.asyncDispose]();
    await runtime[Symbol.asyncDispose]();
    await attacker.shutdown();
    db.close();
    await Deno.remove(dataDir, { recursive: true }).catch(() => {});
  }
});
