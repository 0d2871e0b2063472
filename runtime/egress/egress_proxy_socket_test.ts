import assert from "node:assert/strict";
import { join } from "node:path";
import type { ProxyQuestion } from "../proxy/proxy_protocol.ts";
import { EgressProxy, FORWARDER_PORT_BASE } from "./egress_proxy.ts";

Deno.test("a socket listener: private directory, owner-only socket, the session's own judge", async () => {
  const socketDir = await Deno.makeTempDir({ prefix: "omotai-sock-" });
  try {
    await using proxy = EgressProxy.start({ socketDir });
    assert.ok(proxy.listensOnSockets);
    // The proxy process holds the network and this one directory, nothing else.
    // Read once the child has exec'd: between fork and exec /proc shows the parent's line.
    let cmdline: string[] = [];
    for (let i = 0; i < 100; i++) {
      cmdline = (await Deno.readTextFile(`/proc/${proxy.pid}/cmdline`)).split("\0");
      if (cmdline.includes("--allow-net")) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    assert.deepEqual(cmdline.filter((a) => a.startsWith("--allow-")), [
      "--allow-net",
      `--allow-read=${socketDir}`,
      `--allow-write=${socketDir}`,
    ]);
    const asked: ProxyQuestion[] = [];
    const listener = await proxy.listen({
      ask: (q) => {
        asked.push(q);
        return Promise.resolve({ allow: false, reason: "ORIGIN_NOT_ALLOWED", exact: false });
      },
      refused: () => {},
    });
    assert.ok(listener.socket);
    assert.ok(listener.port >= FORWARDER_PORT_BASE);
    assert.equal(proxy.socketOf(listener.port), listener.socket);
    const dir = join(socketDir, "l1");
    assert.equal(listener.socket, join(dir, "proxy.sock"));
    assert.equal((await Deno.stat(dir)).mode! & 0o777, 0o700);
    assert.equal((await Deno.lstat(listener.socket)).mode! & 0o777, 0o600);
    // A request on the socket is this session's question.
    const conn = await Deno.connect({ transport: "unix", path: listener.socket });
    await conn.write(
      new TextEncoder().encode(
        "CONNECT example.test:443 HTTP/1.1\r\nHost: example.test:443\r\n\r\n",
      ),
    );
    const buf = new Uint8Array(512);
    const n = await conn.read(buf);
    conn.close();
    assert.match(new TextDecoder().decode(buf.subarray(0, n ?? 0)), /^HTTP\/1\.1 403/);
    assert.deepEqual(asked, [{ type: "connect", host: "example.test", port: 443 }]);
    listener[Symbol.dispose]();
    assert.equal(proxy.socketOf(listener.port), undefined);
    for (let i = 0; i < 50; i++) {
      try {
        await Deno.stat(dir);
      } catch {
        break;
      }
      await new Promise((r) => setTimeout(r, 20));
    }
    await assert.rejects(Deno.stat(dir), Deno.errors.NotFound);
  } finally {
    await Deno.remove(socketDir, { recursive: true }).catch(() => {});
  }
});

Deno.test("a socket directory with a comma cannot be granted and is refused", () => {
  assert.throws(() => EgressProxy.start({ socketDir: "/tmp/a,b" }), {
    code: "EGRESS_PROXY_FAILED",
  });
});
