/**
 * The runtime's credential broker for `browser_login`: redeems the grants bound to an agent
 * for the page's origin (read from CDP by the tool), opens their secrets from the vault,
 * and puts every value it hands out into the process redactor before anything can echo it.
 * The model never reaches this: it gets the login's status only.
 *
 * @module
 */
import type { Vault } from "../../vault/mod.ts";
import { OmotaiError } from "../mod.ts";
import type { Grants } from "../grants/mod.ts";
import type { Boundary } from "../gate/mod.ts";
import { type LoginPlan, type LoginSecrets, parseTotpSeed } from "../login/mod.ts";
import { egressSecrets, type Redactor } from "../redact/mod.ts";
import type { LoginService } from "../tools/mod.ts";
import { openRuntimeWrite } from "./runtime_write.ts";

/** What the broker is built from. */
export interface LoginServiceDeps {
  grants: Grants;
  /** The open vault; none when the runtime was started without a vault key. */
  vault?: Vault;
  redactor: Redactor;
  taintAfterLogin: "session" | "none";
  /** The policy world's boundary: a login submit opens its write hold there. */
  boundary: Pick<Boundary, "openHold">;
  /** Under `read_only`, the origins a login may submit to; undefined: writes are allowed. */
  loginOrigins: readonly string[] | undefined;
}

/** The LoginService of a runtime. */
export function grantLoginService(deps: LoginServiceDeps): LoginService {
  return {
    taintAfterLogin: deps.taintAfterLogin,
    async redeem({ agent, sessionId, origin, grantIds }) {
      const vault = deps.vault;
      if (!vault) {
        throw new OmotaiError(
          "VAULT_UNAVAILABLE",
          "the runtime was started without OMOTAI_VAULT_KEY or OMOTAI_VAULT_PASSPHRASE",
        );
      }
      const granted = await deps.grants.redeem({
        agent,
        useKind: "fill",
        origin,
        sessionId,
        grantIds,
      });
      const kinds = new Map(vault.list().map((s) => [s.id, s.kind]));
      const secrets: LoginSecrets = {};
      for (const g of granted) {
        const kind = kinds.get(g.secret_id);
        const value = await vault.reveal(g.secret_id);
        deps.redactor.add([value], { wholeOnly: kind === "username" });
        // Values other than a username leave the browser only in the login's own submission.
        if (kind !== "username") egressSecrets().add([value]);
        if (kind === "username") secrets.username = value;
        else if (kind === "password") secrets.password = value;
        else if (kind === "totp") secrets.totp = parseTotpSeed(value);
      }
      const plan: LoginPlan = {
        origins: [origin],
        openWrite: openRuntimeWrite(deps.boundary, sessionId, deps.loginOrigins),
      };
      return { plan, secrets };
    },
  };
}
