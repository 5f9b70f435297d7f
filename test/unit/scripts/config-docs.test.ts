/**
 * docs/configuration.md is generated from the configuration schema (scripts/config-docs.ts): the
 * committed page must be exactly what `npm run docs:config` writes, so a setting added, removed or
 * changed in src/config/schema.ts without regenerating the page fails here.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { CONFIGURATION_PAGE, configurationPage } from "../../../scripts/config-docs.ts";
import { DEPRECATED_SETTINGS, SETTINGS } from "../../../src/config/schema.ts";

const committed = readFileSync(join(import.meta.dirname, "../../..", CONFIGURATION_PAGE), "utf8");

describe("docs/configuration.md", () => {
  it("is what `npm run docs:config` generates from the schema (run it after changing a setting)", () => {
    expect(committed).toBe(configurationPage());
  });

  it("has a row for every setting and every deprecated name", () => {
    for (const name of [...Object.keys(SETTINGS), ...Object.keys(DEPRECATED_SETTINGS)]) {
      expect(committed).toMatch(new RegExp(`^\\| \`${name}\` +\\|`, "m"));
    }
  });
});
