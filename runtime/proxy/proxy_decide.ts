/**
 * The policy question of one tunnel or request: asked first, the name looked up only after
 * an allow (a lookup of a name the policy refuses would itself carry data to the attacker's
 * DNS server), then the boundary's address rule (`net/address_rule.ts`) applied to the answer
 * with the boundary's word on whether the origin is listed exactly: the proxy enforces it and
 * decides nothing of its own. The address returned is the one dialled: no second lookup, so a
 * DNS answer cannot change between the check and the connect.
 *
 * @module
 */
import { isIpLiteral, isPrivateHost } from "../net/addresses.ts";
import { addressRule } from "../net/address_rule.ts";
import type { ServeContext } from "./proxy_context.ts";
import type { ProxyQuestion, Resolution } from "./proxy_protocol.ts";

/**
 * Asks, then looks `host` up. Returns the address to dial, or the reason it was refused
 * (a refusal after the allow is reported through `refused`).
 */
export async function decide(
  question: ProxyQuestion,
  host: string,
  ctx: Pick<ServeContext, "ask" | "refused" | "resolve">,
): Promise<{ address?: string; reason: string }> {
  const answer = await ctx.ask(question);
  if (!answer.allow) return { reason: answer.reason };
  const resolution = await resolveHost(host, ctx.resolve);
  const reason = addressRule({ host, addresses: resolution.addresses }, () => answer.exact);
  if (reason) {
    ctx.refused(question, reason);
    return { reason };
  }
  return { address: resolution.addresses[0], reason: answer.reason };
}

/** The system's resolver: A, then AAAA, 5 s each. */
export async function defaultResolve(host: string): Promise<string[]> {
  const out: string[] = [];
  for (const type of ["A", "AAAA"] as const) {
    try {
      out.push(...await Deno.resolveDns(host, type, { signal: AbortSignal.timeout(5_000) }));
    } catch { /* try the other family */ }
  }
  return out;
}

/** Looks up `host` (literals and localhost need no lookup). */
export async function resolveHost(
  host: string,
  resolve: (host: string) => Promise<string[]>,
): Promise<Resolution> {
  const bare = host.replace(/^\[|\]$/g, "");
  let addresses: string[];
  if (isIpLiteral(bare)) addresses = [bare];
  else if (isPrivateHost(bare)) addresses = ["127.0.0.1"];
  else addresses = await resolve(bare).catch(() => []);
  return {
    addresses,
    privateAddress: isPrivateHost(bare) || addresses.some((a) => isPrivateHost(a)),
    failed: addresses.length === 0,
  };
}
