import assert from "node:assert/strict";
import { join } from "node:path";
import { refOf, startHarness } from "./helpers/harness.ts";

/** A page with a file input whose form posts to the site, which keeps the bodies. */
function uploadSite() {
  const bodies: string[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
    if (req.method === "POST") {
      bodies.push(await req.text());
      return new Response("<h1>Received</h1>", { headers: { "content-type": "text/html" } });
    }
    return new Response(
      `<!doctype html><title>Upload</title><h1>Upload</h1>
<form method="post" enctype="multipart/form-data" action="/up">
<label>Attachment <input type="file" name="f"></label><button>Send</button></form>`,
      { headers: { "content-type": "text/html" } },
    );
  });
  return {
    origin: `http://127.0.0.1:${server.addr.port}`,
    bodies,
    [Symbol.asyncDispose]: () => server.shutdown(),
  };
}

async function uploadDir() {
  const root = await Deno.makeTempDir({ prefix: "omotai-upload-" });
  const dir = join(root, "uploads");
  await Deno.mkdir(dir);
  await Deno.writeTextFile(join(dir, "report.txt"), "quarterly-figures-4471");
  await Deno.writeTextFile(join(root, "outside.txt"), "not-for-upload-9913");
  await Deno.symlink(join(root, "outside.txt"), join(dir, "sneaky.txt"));
  return { root, dir };
}

Deno.test("browser_file_upload answers a file chooser with a file from the upload dir", async () => {
  await using site = uploadSite();
  const { root, dir } = await uploadDir();
  await using h = await startHarness(() =>
    `allowed_origins: [${site.origin}]\nread_only: false\nupload_dir: ${dir}\n`
  );
  await using c = await h.connect();
  try {
    const none = await c.call("browser_file_upload", { paths: ["report.txt"] });
    assert.match(none.text, /^error: NO_FILE_CHOOSER/);
    const page = await c.call("browser_navigate", { url: `${site.origin}/` });
    const opened = await c.call("browser_click", { ref: refOf(page.text, /Attachment/) });
    assert.match(opened.text, /a file chooser opened on tab 0; answer it with browser_file_upload/);
    // Outside the upload dir, by `..`, by absolute path or by a symlink: refused.
    for (const path of ["../outside.txt", join(root, "outside.txt"), "sneaky.txt", "/etc/passwd"]) {
      const r = await c.call("browser_file_upload", { paths: [path] });
      assert.match(r.text, /^error: UPLOAD_NOT_ALLOWED/, path);
      assert.ok(!r.text.includes(root), `the result names no directory: ${r.text}`);
    }
    const up = await c.call("browser_file_upload", { paths: ["report.txt"] });
    assert.equal(up.isError, false, up.text);
    assert.match(up.text, /chose 1 file\(s\): "report\.txt"/);
    const sent = await c.call("browser_click", { ref: refOf(page.text, /button "Send"/) });
    assert.match(sent.text, /# Received/);
    assert.equal(site.bodies.length, 1);
    assert.match(site.bodies[0], /quarterly-figures-4471/);
    assert.doesNotMatch(site.bodies[0], /not-for-upload-9913/);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("browser_file_upload is refused without an upload_dir in the policy", async () => {
  await using site = uploadSite();
  const { root } = await uploadDir();
  await using h = await startHarness(() => `allowed_origins: [${site.origin}]\nread_only: false\n`);
  await using c = await h.connect();
  try {
    const page = await c.call("browser_navigate", { url: `${site.origin}/` });
    await c.call("browser_click", { ref: refOf(page.text, /Attachment/) });
    const r = await c.call("browser_file_upload", { paths: [join(root, "outside.txt")] });
    assert.match(r.text, /^error: UPLOAD_NOT_ALLOWED/);
    // Cancelling needs no files and works.
    const cancel = await c.call("browser_file_upload", {});
    assert.match(cancel.text, /cancelled the file chooser/);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});
