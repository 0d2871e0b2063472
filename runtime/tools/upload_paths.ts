/**
 * Which files an upload may send: only regular files whose real path (symlinks followed) is
 * inside the operator's upload directory. The model names files; the runtime decides.
 *
 * @module
 */
import { basename, isAbsolute, relative, resolve, sep } from "node:path";
import { OmotaiError } from "../mod.ts";

function refused(message: string): OmotaiError {
  return new OmotaiError("UPLOAD_NOT_ALLOWED", message);
}

/**
 * Resolves the model's `paths` (relative ones against `uploadDir`) to real paths inside the
 * real `uploadDir`; throws `UPLOAD_NOT_ALLOWED` for the first that is not allowed. Messages
 * name only a file's base name, never where it is or where a link points.
 */
export async function resolveUploadPaths(
  paths: string[],
  uploadDir: string | undefined,
): Promise<string[]> {
  if (uploadDir === undefined) {
    throw refused("uploads are off: the policy sets no upload_dir");
  }
  let realDir: string;
  try {
    realDir = await Deno.realPath(uploadDir);
  } catch {
    throw refused("the upload directory is not available");
  }
  const out: string[] = [];
  for (const path of paths) {
    const name = JSON.stringify(basename(path).slice(0, 200));
    if (path.includes("\0")) throw refused(`${name} is not a valid file name`);
    let real: string;
    try {
      real = await Deno.realPath(isAbsolute(path) ? path : resolve(uploadDir, path));
    } catch {
      throw refused(`${name} does not exist in the upload directory`);
    }
    const rel = relative(realDir, real);
    if (rel === "" || rel.split(sep)[0] === ".." || isAbsolute(rel)) {
      throw refused(`${name} is not inside the upload directory`);
    }
    let info: Deno.FileInfo;
    try {
      info = await Deno.stat(real);
    } catch {
      throw refused(`${name} cannot be read`);
    }
    if (!info.isFile) throw refused(`${name} is not a regular file`);
    out.push(real);
  }
  return out;
}
