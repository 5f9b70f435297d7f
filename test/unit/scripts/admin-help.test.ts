/**
 * `npm run admin -- --help` (scripts/admin.ts) prints the commands and exits 0; a flag it does not
 * know prints what was wrong and the commands, exits 2, and shows no stack trace. Neither reaches
 * a stack: they run before any request.
 */
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const SCRIPT = join(import.meta.dirname, "../../../scripts/admin.ts");

function admin(...args: string[]) {
  return spawnSync(process.execPath, [SCRIPT, ...args], { encoding: "utf8", timeout: 20_000 });
}

describe("the admin CLI's help", () => {
  it("answers --help and -h with its commands", () => {
    for (const flag of ["--help", "-h"]) {
      const run = admin(flag);
      expect(run.status, run.stderr).toBe(0);
      expect(run.stdout).toContain("tenants create <id>");
      expect(run.stdout).toContain("upstream-key set <tenant>");
    }
  });

  it("refuses an unknown flag with the usage, exit code 2 and no stack trace", () => {
    const run = admin("--bogus");
    expect(run.status).toBe(2);
    expect(run.stderr).toContain("Unknown option '--bogus'");
    expect(run.stderr).toContain("tenants create <id>");
    expect(run.stderr).not.toMatch(/\n\s+at /);
  });
});
