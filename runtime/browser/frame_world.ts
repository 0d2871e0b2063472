/**
 * The runtime's isolated world in a frame's document, made once per document and reused by
 * every read a scan makes there (its count, its hidden controls, its hidden options).
 *
 * Asking for the world is a round trip to a renderer that may be busy, and Chromium answers
 * each ask in one document with the same context anyway: a page building a thousand frames
 * kept each round trip of its scan waiting seconds, and a scan that asked for the world twice
 * per frame per scan, one read after the other, spent most of its half a minute there. Page
 * scripts cannot reach an isolated world, so the runtime's reads share one.
 *
 * @module
 */
import { type CdpSession, CdpTimeoutError } from "../../cdp/mod.ts";

/** The frame whose document a read runs in. */
export interface WorldFrame {
  id: string;
  /** The document's loader: a new document gets a new world. */
  loaderId: string;
}

/** The world's name, as the frame's execution contexts show it. */
const WORLD_NAME = "omotai";

/** A world being made or made, for the document (loader) it was made in. */
interface World {
  loaderId: string;
  contextId: Promise<number>;
}

/** Worlds by session and frame. Reads that start together share the one being made. */
const worlds = new WeakMap<CdpSession, Map<string, World>>();

/**
 * Runs `read` with the execution context of the runtime's world in `frame`'s document, made
 * on first use. A read that fails for any reason but a timeout may have met a context that
 * went with its document (a `document.open()`, a same-loader reload): it runs once more in a
 * world made anew. A timeout is the renderer being busy, and is not asked twice.
 */
export async function inFrameWorld<T>(
  session: CdpSession,
  frame: WorldFrame,
  read: (contextId: number) => Promise<T>,
  timeoutMs?: number,
): Promise<T> {
  let byFrame = worlds.get(session);
  if (!byFrame) worlds.set(session, byFrame = new Map());
  const make = (): World => {
    const world: World = {
      loaderId: frame.loaderId,
      contextId: session.send("Page.createIsolatedWorld", {
        frameId: frame.id,
        worldName: WORLD_NAME,
      }, timeoutMs === undefined ? undefined : { timeoutMs }).then((r) => r.executionContextId),
    };
    byFrame.set(frame.id, world);
    return world;
  };
  const forget = (world: World) => {
    if (byFrame.get(frame.id) === world) byFrame.delete(frame.id);
  };
  const known = byFrame.get(frame.id);
  if (known && known.loaderId === frame.loaderId) {
    try {
      return await read(await known.contextId);
    } catch (err) {
      forget(known);
      if (err instanceof CdpTimeoutError) throw err;
    }
  }
  const world = make();
  try {
    return await read(await world.contextId);
  } catch (err) {
    forget(world);
    throw err;
  }
}
