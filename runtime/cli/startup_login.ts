/**
 * The policy's `login:` block, performed by the runtime at the start of every session before
 * the agent's first action (the first seed's startup login): it opens `url`, types the
 * vault's values into that origin's credential fields and reports one status line. The
 * operator's policy is the grant here: no grant is redeemed, and `taint_after_login` defaults
 * to `none`, since the agent is meant to browse the signed-in site.
 *
 * @module
 */
import { errorCode } from "../mod.ts";
import type { Vault } from "../../vault/mod.ts";
import { type BrowserSession, navigate } from "../browser/mod.ts";
import type { Boundary } from "../gate/mod.ts";
import { parseTotpSeed, performLogin, type PushChannel } from "../login/mod.ts";
import type { PolicyFile } from "../policy/mod.ts";
import { egressSecrets, type Redactor } from "../redact/mod.ts";
import { openRuntimeWrite } from "./runtime_write.ts";

/** What a startup login needs besides its policy block. */
export interface StartupLoginDeps {
  vault?: Vault;
  redactor: Redactor;
  boundary: Pick<Boundary, "openHold">;
  /** Under `read_only`, the origins a login may submit to; undefined: writes are allowed. */
  loginOrigins: readonly string[] | undefined;
  push?: (session: { id: string; agent: string | null }) => PushChannel | undefined;
}

/**
 * The startup login of `login`: a function run before each session's first call that logs
 * in once and returns the status line for the agent (undefined on later calls).
 */
export function startupLogin(
  login: NonNullable<PolicyFile["login"]>,
  deps: StartupLoginDeps,
): (session: BrowserSession) => Promise<string | undefined> {
  const done = new WeakSet<BrowserSession>();
  return async (session) => {
    if (done.has(session)) return undefined;
    done.add(session);
    const origin = new URL(login.url).origin;
    const status = await run(session).catch((err) => {
      return { ok: false, status: errorCode(err) ?? "LOGIN_FAILED" };
    });
    session.audit({
      kind: "startup_login",
      source: "action",
      origin,
      decision: status.ok ? "allow" : "deny",
      reason: status.status,
    });
    if (login.taint_after_login === "session") session.state.taint("login");
    return `startup login on ${origin}: ${status.status}`;
  };

  async function run(session: BrowserSession): Promise<{ ok: boolean; status: string }> {
    const vault = deps.vault;
    if (!vault) return { ok: false, status: "VAULT_UNAVAILABLE" };
    const reveal = async (id: string, guard = true) => {
      const value = await vault.reveal(id);
      deps.redactor.add([value], { wholeOnly: !guard });
      // Leaves the browser only in the login's own submission (a username may be in URLs).
      if (guard) egressSecrets().add([value]);
      return value;
    };
    const username = login.username_secret
      ? await reveal(login.username_secret, false)
      : login.username;
    const password = await reveal(login.password_secret);
    using totp = login.totp_secret ? parseTotpSeed(await reveal(login.totp_secret)) : undefined;
    const page = await session.page();
    const loaded = await navigate(page, login.url);
    if (loaded.error) return { ok: false, status: "LOGIN_PAGE_UNREACHABLE" };
    const origin = new URL(login.url).origin;
    const outcome = await performLogin(
      page,
      {
        origins: [origin],
        usernameSelector: login.username_selector,
        push: login.push
          ? { vendor: login.push.vendor_selector, number: login.push.number_selector }
          : undefined,
        openWrite: openRuntimeWrite(deps.boundary, session.id, deps.loginOrigins),
      },
      { username, password, totp },
      deps.push?.({ id: session.id, agent: session.agent }),
    );
    return { ok: outcome.ok, status: outcome.status };
  }
}
