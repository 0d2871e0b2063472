/**
 * The short, stable explanation after a deny code, built from facts only: it never
 * reveals policy internals, queries or typed text.
 *
 * @module
 */
import type { Facts } from "../policy/mod.ts";

/** E.g. `POST form to http://portal.test/transfer` for READ_ONLY_SUBMIT. */
export function denyDetail(reason: string, facts: Facts | undefined): string | undefined {
  if (!facts) return undefined;
  const where = (origin: string | null, path: string | null) =>
    origin ? `${origin}${path && path !== "/" ? path : ""}` : undefined;
  const form = facts.form;
  switch (reason) {
    case "READ_ONLY_SUBMIT":
    case "FORM_DESTINATION_NOT_ALLOWED":
    case "FORM_THIRD_PARTY":
      return form
        ? `${form.method} form to ${
          where(form.action_origin, form.action_path) ?? "an unknown destination"
        }`
        : undefined;
    case "LINK_ORIGIN_NOT_ALLOWED":
      return facts.element?.link_origin ? `link to ${facts.element.link_origin}` : undefined;
    case "SCHEME_NOT_ALLOWED": {
      const scheme = facts.target?.scheme ?? facts.element?.link_scheme;
      return scheme ? `${scheme}: URLs are not allowed` : undefined;
    }
    case "ORIGIN_NOT_ALLOWED":
      return facts.target?.origin ? `${facts.target.origin} is not an allowed origin` : undefined;
    case "PATH_DENIED":
    case "PATH_NOT_ALLOWED": {
      const t = facts.target ??
        (facts.element?.link_origin
          ? { origin: facts.element.link_origin, path: facts.element.link_path }
          : form && { origin: form.action_origin, path: form.action_path });
      return t ? `${where(t.origin, t.path)}` : undefined;
    }
    case "DOMAIN_DENIED":
    case "PRIVATE_ADDRESS": {
      const o = facts.target?.origin ?? facts.element?.link_origin ?? form?.action_origin;
      return o
        ? `${o} is ${reason === "DOMAIN_DENIED" ? "denied by the operator" : "a private address"}`
        : undefined;
    }
    case "DOMAINS_UNREADABLE":
      return "the operator's domain rules cannot be read; nothing is allowed until they can";
    case "LIMIT_ACTIONS":
      return `${facts.session.actions_used} actions used`;
    case "LIMIT_TIME":
      return `${Math.floor(facts.session.seconds_elapsed)} s elapsed`;
    case "POLICY_ERROR":
      return "a policy module failed; the action is refused";
    case "NO_POLICY_ALLOWED":
      return "no policy allowed this action";
    default:
      return undefined;
  }
}
