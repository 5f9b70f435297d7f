/**
 * A real browser for end-to-end tests: Debian's Chromium (`apt-get install chromium`; `.ci/run`
 * installs it) driven by playwright-core, which downloads nothing. `CHROMIUM_PATH` overrides the
 * executable. A missing browser fails the test with how to install it, never skips it.
 * Screenshots go under `test-results/browser/` (ignored by git).
 */
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { type Browser, chromium } from "playwright-core";
import { REPO_ROOT } from "../../scripts/local-stack.ts";

/** Where the browser tests save their screenshots. */
export const SCREENSHOT_DIR = join(REPO_ROOT, "test-results", "browser");

/** Launches headless Chromium. */
export async function launchChromium(): Promise<Browser> {
  const executablePath = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
  if (!existsSync(executablePath)) {
    throw new Error(
      `No Chromium at ${executablePath}: install Debian's package (apt-get install chromium, as .ci/run does) or set CHROMIUM_PATH.`,
    );
  }
  return chromium.launch({ executablePath, headless: true });
}

/** The path of a screenshot named `name` (its directory created). */
export function screenshotPath(name: string): string {
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  return join(SCREENSHOT_DIR, name);
}
