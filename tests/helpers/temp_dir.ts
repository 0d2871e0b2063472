/**
 * A temporary directory removed with everything in it when it is disposed. Declared with
 * `await using` before what writes into it (a runtime, a browser), it is removed after them:
 * a browser still shutting down would otherwise write its profile back into a removed dir.
 *
 * @module
 */

/** A directory under the system's temp dir, and its removal. */
export interface TempDir extends AsyncDisposable {
  path: string;
}

/** Makes a fresh directory named `prefix` + random. */
export async function tempDir(prefix: string): Promise<TempDir> {
  const path = await Deno.makeTempDir({ prefix });
  return {
    path,
    async [Symbol.asyncDispose]() {
      await Deno.remove(path, { recursive: true }).catch(() => {});
    },
  };
}
