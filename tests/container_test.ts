/**
 * One MCP session in the image the Dockerfile builds: `.ci/container` builds it with Debian's
 * podman and sets `OMOTAI_CONTAINER_RUN` to the `podman run` command line (the image last);
 * this test appends the runtime's arguments, speaks MCP over the container's stdio, browses the
 * bundled demo site inside the container (no network: `--network none`) and checks the image's
 * browser pin held. Without `OMOTAI_CONTAINER_RUN` (the README's test command) it is skipped:
 * building an image takes minutes and a container engine the README does not install.
 *
 * @module
 */
import assert from "node:assert/strict";
// @ts-types="npm:@modelcontextprotocol/sdk@1.32.2/client/index"
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
// @ts-types="npm:@modelcontextprotocol/sdk@1.32.2/client/stdio"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { TestClient } from "./helpers/harness.ts";

const RUN = Deno.env.get("OMOTAI_CONTAINER_RUN");

Deno.test({
  name: "the Dockerfile's image serves one MCP session over stdio and browses its demo site",
  ignore: RUN === undefined,
  async fn() {
    const [command, ...args] = RUN!.split(" ").filter((w) => w !== "");
    let stderr = "";
    const transport = new StdioClientTransport({
      command,
      args: [
        ...args,
        "start",
        "--policy",
        "/app/runtime/demo/demo_policy.yaml",
        "--demo-site",
      ],
      stderr: "pipe",
    });
    transport.stderr?.on("data", (chunk: Uint8Array) => {
      stderr += new TextDecoder().decode(chunk);
    });
    const client = new Client({ name: "container-test", version: "1" });
    await client.connect(transport);
    try {
      await using c = new TestClient(client);
      const { tools } = await client.listTools();
      assert.ok(tools.some((t) => t.name === "browser_navigate"), stderr);
      const r = await c.call("browser_navigate", { url: "http://127.0.0.1:8081/" });
      assert.equal(r.isError, false, `${r.text}\n${stderr}`);
      assert.match(r.text, /Omotai demo shop/);
      // The image pins its browser (OMOTAI_BROWSER_SHA256): a browser that started passed it.
      assert.doesNotMatch(stderr, /BROWSER_PIN_MISMATCH/);
    } finally {
      await client.close();
    }
  },
});
