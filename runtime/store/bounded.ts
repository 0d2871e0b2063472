/**
 * A wait with an end: a store call that outlasts its bound is answered `DB_UNAVAILABLE`
 * (the caller denies), never a hang. The call itself may still finish; nobody waits for it.
 *
 * @module
 */
import { OmotaiError } from "../mod.ts";

/** `work`'s value, or a `DB_UNAVAILABLE` rejection once `ms` have passed without one. */
export async function bounded<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new OmotaiError("DB_UNAVAILABLE", "the database did not answer in time")),
      ms,
    );
  });
  try {
    return await Promise.race([work, late]);
  } finally {
    clearTimeout(timer);
  }
}
