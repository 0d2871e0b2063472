/**
 * The boundary's address rule, kept here, below both of its callers: a destination whose
 * name, or any address it resolved to, is private or loopback leaves only when its exact
 * origin is listed (`PRIVATE_ADDRESS`), and a name that resolved to nothing does not leave
 * at all (`DNS_FAILED`). It is part of the boundary (`gate/boundary.ts` re-exports it and
 * applies it to a request's name before any lookup); the egress proxy, a child process that
 * may import only `net/`, applies the same rule to the DNS answer after the boundary's allow,
 * with the boundary's word on whether the origin is listed exactly. One rule, two moments:
 * the name is all the runtime ever sees, the answer only the proxy.
 *
 * @module
 */
import { isPrivateHost } from "./addresses.ts";

/** What the rule knows of one destination. */
export interface AddressFacts {
  /** The host as asked: a name or an IP literal (brackets allowed). */
  host: string;
  /**
   * What the name resolved to (an IP literal resolves to itself; none when the lookup
   * failed). Undefined before any lookup: then the name alone is judged.
   */
  addresses?: readonly string[];
}

/** The rule's refusals. */
export type AddressRefusal = "PRIVATE_ADDRESS" | "DNS_FAILED";

/**
 * The refusal for `facts`, or undefined when the destination may be reached. `listed` says
 * whether the origin is listed exactly (policy file or operator allow); it is asked only for
 * a private destination.
 */
export function addressRule(
  facts: AddressFacts,
  listed: () => boolean,
): AddressRefusal | undefined {
  if (facts.addresses !== undefined && facts.addresses.length === 0) return "DNS_FAILED";
  const isPrivate = isPrivateHost(facts.host) ||
    (facts.addresses ?? []).some((a) => isPrivateHost(a));
  return isPrivate && !listed() ? "PRIVATE_ADDRESS" : undefined;
}
