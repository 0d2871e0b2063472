import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { PG_MIGRATIONS } from "./pg_migrations.ts";

// The SHA-256 of every migration's text as databases applied it: a migration that ran is never
// rewritten (a database at that version would never see the change), so its text, shared
// fragments (pg_sql.ts) included, must stay byte for byte the same. A new step appends here.
const APPLIED = [
  "07f9b8654c5c1b0682be96e8fd9d569af30a8d340e195d0421fca77fe0142ff6",
  "f9bcfb0625710703f32b4350b130e45fd3cfc380cf78c2d8be1aa1f192258c3a",
  "1761269bc2ff59ff6989f4b5a0e5cb0051ef45ea721d41225c507458e0018395",
  "05aaa303cf7a50e12bdb45cbf23e8e4428cd6f51c69ce0c54c3bf48117952880",
  "571d69b65a11cf7eef8598d91adc2a21cc9b40e5f9e280b2caac534b5e4a2cfc",
  "6deab1a0d50268f44acdbbd4080fc3cfc9504fe0fa814e1b027ce8507a8634d2",
  "ed63fb5d8af443a67627b6bc351f823f0bd5cf994b267b1db9bba3464b2bb26e",
  "672ae984d5c991a9a03f1294ba348359c2ff4e3b5ba24766e605269866cb44f9",
  "52209401097430fca4de88bd1d6641ee6df2e9df39ec0f9ab695c428e94333c3",
  "5a5cd7f89666e2ec40638f1fc2f7bfea68cec2ece2be7e65f9f8ebfdba8945dd",
  "307b45dfc965efe0b85a5d8611687932c7ca7a059863c32819ea081ff0e72897",
  "bb306a2759bac383b59e4995109b23b46765b6e77fdbd14c9cc1a5cb1b684d8e",
  "42c2cd73fa521d65334737c6d57cda13c88821c086f04eb9856b7ec68ea67062",
  "2bf8963555d0142944e742429dcb1c4192ef4bcd0abda4accac05a3582338da9",
  "a769f1eb902738905b2b16e175de2faeef0dd55b98fe3ec143fc87af8b5c9905",
  "572575b8adbfbe5850c2747091b7dc7b85b20f7c94f2a90767db86af95a66168",
  "2d5cae8e9979885336df33efa3d35b2cc6600ef62c7172c6e867505f9f788091",
];

Deno.test("PG_MIGRATIONS: every applied migration's text is byte for byte what databases ran", () => {
  const hashes = PG_MIGRATIONS.map((sql) => createHash("sha256").update(sql, "utf8").digest("hex"));
  assert.deepEqual(hashes.slice(0, APPLIED.length), APPLIED);
});
