/**
 * Short element refs (`e12`) bound to the document they were issued for. Numbers are never
 * reused within a session, so an old ref never aliases an element of a newer document by
 * accident: only `adopt()` moves a ref, when its element is gone and a new one reads the
 * same (see `ref_carry.ts`).
 *
 * @module
 */
import { UnknownRefError } from "../mod.ts";

/** Where a ref points. */
export interface RefTarget {
  /** CDP session id of the target (page or out-of-process iframe) holding the element. */
  sessionId: string;
  /** Target id of the tab the element belongs to. */
  tabId: string;
  frameId: string;
  /** Loader (document) id of the element's frame when the ref was issued. */
  loaderId: string;
  /** The tab's document id (`d3`) shown in the snapshot. */
  docId: string;
  backendNodeId: number;
  /** Whether the element is in the tab's main frame (only those refs carry over). */
  mainFrame?: boolean;
}

const REF_PATTERN = /^e([1-9][0-9]{0,8})$/;

/** Issues and resolves refs. */
export class RefTable {
  #next = 1;
  #byKey = new Map<string, string>();
  #byRef = new Map<string, RefTarget>();

  /** The ref for this element of this document, reusing one issued before. */
  issue(target: RefTarget): string {
    const key = keyOf(target);
    const existing = this.#byKey.get(key);
    if (existing) {
      // The same element keeps its ref, but follows the tab's current document id.
      this.#byRef.get(existing)!.docId = target.docId;
      return existing;
    }
    const ref = `e${this.#next++}`;
    this.#byKey.set(key, ref);
    this.#byRef.set(ref, target);
    return ref;
  }

  /** The number the next fresh ref gets: refs at or above it were issued after this call. */
  get nextNumber(): number {
    return this.#next;
  }

  /**
   * Gives the element of the fresh ref `fresh` the ref `old` (whose element is gone) and
   * forgets `fresh`, which was never shown. Both must be main-frame elements of one tab.
   */
  adopt(old: string, fresh: string): boolean {
    const was = this.#byRef.get(old);
    const now = this.#byRef.get(fresh);
    if (!was || !now || was.tabId !== now.tabId || !was.mainFrame || !now.mainFrame) {
      return false;
    }
    this.#byKey.delete(keyOf(was));
    this.#byKey.set(keyOf(now), old);
    this.#byRef.set(old, now);
    this.#byRef.delete(fresh);
    return true;
  }

  /** The target of `ref`; throws `UnknownRefError` for refs never issued. */
  lookup(ref: string): RefTarget {
    const target = REF_PATTERN.test(ref) ? this.#byRef.get(ref) : undefined;
    if (!target) throw new UnknownRefError(ref);
    return target;
  }
}

function keyOf(t: RefTarget): string {
  return `${t.tabId}|${t.frameId}|${t.loaderId}|${t.backendNodeId}`;
}
