/**
 * The runtime's own write hold, opened on a policy world's boundary for one session: what a
 * login's `openWrite` and each step of a credential capture use while the runtime sends a
 * request of its own.
 *
 * @module
 */
import { type Boundary, runtimeHold } from "../gate/mod.ts";
import type { RuntimeWriteHold } from "../login/mod.ts";

/**
 * Opens the session's one write hold while the runtime sends a request of its own: it admits
 * exactly the request the flow expects (a login's filled form, to a named origin under
 * `read_only`; a capture step's form or fetch, to its template's origins) and refuses every
 * other write. The agent's login, the startup login and every capture step open it here.
 */
export function openRuntimeWrite(
  boundary: Pick<Boundary, "openHold">,
  session: string,
  namedOrigins: readonly string[] | undefined,
  purpose: "login" | "capture" = "login",
): () => RuntimeWriteHold {
  return () => {
    const hold = runtimeHold({ purpose });
    const close = boundary.openHold(session, hold);
    return {
      expect: (write) => hold.expect(write && { ...write, namedOrigins }),
      settled: (ms) => hold.settled(ms),
      close: () => {
        close();
        return hold.refused;
      },
      get admitted() {
        return hold.admitted;
      },
    };
  };
}
