import assert from "node:assert/strict";
import { OmotaiError } from "../errors.ts";
import { resolveUploadPaths } from "./upload_paths.ts";

/** An upload dir with a file, a subdirectory and links, next to a file outside it. */
async function tree() {
  const root = await Deno.realPath(await Deno.makeTempDir({ prefix: "omotai-upload-test-" }));
  const dir = `${root}/uploads`;
  await Deno.mkdir(`${dir}/sub`, { recursive: true });
  await Deno.writeTextFile(`${dir}/report.txt`, "ok");
  await Deno.writeTextFile(`${dir}/sub/..notes.txt`, "ok");
  await Deno.writeTextFile(`${root}/secret.txt`, "outside");
  await Deno.symlink(`${root}/secret.txt`, `${dir}/escape.txt`);
  await Deno.symlink(`${dir}/report.txt`, `${dir}/alias.txt`);
  return {
    root,
    dir,
    async [Symbol.asyncDispose]() {
      await Deno.remove(root, { recursive: true });
    },
  };
}

const refusal = (pattern: RegExp) => (e: unknown) =>
  e instanceof OmotaiError && e.code === "UPLOAD_NOT_ALLOWED" && pattern.test(e.message);

Deno.test("resolveUploadPaths() resolves relative and absolute paths inside the dir to real paths", async () => {
  await using t = await tree();
  assert.deepEqual(
    await resolveUploadPaths(
      ["report.txt", `${t.dir}/sub/..notes.txt`, "./sub/../report.txt"],
      t.dir,
    ),
    [`${t.dir}/report.txt`, `${t.dir}/sub/..notes.txt`, `${t.dir}/report.txt`],
  );
});

Deno.test("resolveUploadPaths() follows a symlink inside the dir that points inside it", async () => {
  await using t = await tree();
  assert.deepEqual(await resolveUploadPaths(["alias.txt"], t.dir), [`${t.dir}/report.txt`]);
});

Deno.test("resolveUploadPaths() refuses everything without an upload dir", async () => {
  await assert.rejects(() => resolveUploadPaths(["a.txt"], undefined), refusal(/no upload_dir/));
});

Deno.test("resolveUploadPaths() refuses .. out of the dir, naming only the base name", async () => {
  await using t = await tree();
  await assert.rejects(
    () => resolveUploadPaths(["../secret.txt"], t.dir),
    (e: unknown) =>
      refusal(/"secret\.txt" is not inside the upload directory/)(e) &&
      !(e as Error).message.includes(t.root),
  );
  await assert.rejects(
    () => resolveUploadPaths(["sub/../../secret.txt"], t.dir),
    refusal(/not inside/),
  );
});

Deno.test("resolveUploadPaths() refuses an absolute path outside the dir", async () => {
  await using t = await tree();
  await assert.rejects(
    () => resolveUploadPaths([`${t.root}/secret.txt`], t.dir),
    refusal(/not inside/),
  );
  await assert.rejects(
    () => resolveUploadPaths(["/etc/passwd"], t.dir),
    refusal(/"passwd" is not inside/),
  );
});

Deno.test("resolveUploadPaths() refuses a symlink that points outside the dir", async () => {
  await using t = await tree();
  await assert.rejects(
    () => resolveUploadPaths(["report.txt", "escape.txt"], t.dir),
    (e: unknown) =>
      refusal(/"escape\.txt" is not inside/)(e) && !(e as Error).message.includes("secret"),
  );
});

Deno.test("resolveUploadPaths() refuses a directory, the dir itself and a missing file", async () => {
  await using t = await tree();
  await assert.rejects(
    () => resolveUploadPaths(["sub"], t.dir),
    refusal(/"sub" is not a regular file/),
  );
  await assert.rejects(() => resolveUploadPaths(["."], t.dir), refusal(/not inside/));
  await assert.rejects(
    () => resolveUploadPaths(["missing.txt"], t.dir),
    refusal(/"missing\.txt" does not exist/),
  );
  await assert.rejects(() => resolveUploadPaths(["a\0b"], t.dir), refusal(/not a valid file name/));
});

Deno.test("resolveUploadPaths() compares real paths when the upload dir is itself a link", async () => {
  await using t = await tree();
  await Deno.symlink(t.dir, `${t.root}/link-to-uploads`);
  assert.deepEqual(await resolveUploadPaths(["report.txt"], `${t.root}/link-to-uploads`), [
    `${t.dir}/report.txt`,
  ]);
  await assert.rejects(
    () => resolveUploadPaths(["../secret.txt"], `${t.root}/link-to-uploads`),
    refusal(/not inside/),
  );
});
