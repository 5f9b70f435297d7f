/**
 * Every link in the README and docs/ resolves: a relative link names a file of this checkout and,
 * with a `#fragment`, a heading of that file (GitHub's anchor rule); a `docs/….md` or `README.md`
 * path named in a source comment exists. The manual is split by topic across docs/ and the
 * README links into it (issue #24), so a moved or renamed section must not leave a dead link.
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = resolve(import.meta.dirname, "../../..");

/** The Markdown files of the manual: the README and every page of docs/. */
function manualFiles(): string[] {
  const docs = readdirSync(join(ROOT, "docs"), { recursive: true, encoding: "utf8" })
    .filter((name) => name.endsWith(".md"))
    .map((name) => join(ROOT, "docs", name));
  return [join(ROOT, "README.md"), join(ROOT, "bench", "README.md"), ...docs];
}

/** Text outside fenced code blocks (a link inside a code sample is not a link). */
function prose(markdown: string): string {
  return markdown.replace(/^(```|~~~)[\s\S]*?^\1/gm, "");
}

/**
 * GitHub's anchor of a heading: lower case, without characters other than letters, digits,
 * spaces, hyphens and underscores, spaces turned into hyphens; a repeated anchor gets `-1`, `-2`…
 */
function anchors(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const found = new Set<string>();
  for (const match of prose(markdown).matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)) {
    const text = (match[1] ?? "").replace(/\[([^\]]*)\]\([^)]*\)/g, "$1");
    const base = text
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, "")
      .replace(/\s/g, "-");
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    found.add(n === 0 ? base : `${base}-${n}`);
  }
  return found;
}

/** The relative link targets of a Markdown file (inline links and reference definitions). */
function links(markdown: string): string[] {
  const text = prose(markdown).replace(/`[^`\n]*`/g, "");
  const inline = [...text.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map((m) => m[1] ?? "");
  const defs = [...text.matchAll(/^\s*\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)/gm)].map((m) => m[1] ?? "");
  return [...inline, ...defs].filter((target) => !/^[a-z][a-z0-9+.-]*:/i.test(target));
}

describe("the manual's links", () => {
  for (const file of manualFiles()) {
    it(`every relative link of ${relative(ROOT, file)} resolves`, () => {
      const markdown = readFileSync(file, "utf8");
      const dead: string[] = [];
      for (const target of links(markdown)) {
        const [path = "", fragment] = target.split("#", 2);
        const resolved = path === "" ? file : resolve(dirname(file), decodeURIComponent(path));
        if (!existsSync(resolved)) {
          dead.push(`${target} (no such file)`);
          continue;
        }
        if (fragment === undefined || statSync(resolved).isDirectory() || !resolved.endsWith(".md")) continue;
        if (!anchors(readFileSync(resolved, "utf8")).has(fragment.toLowerCase())) {
          dead.push(`${target} (no such heading)`);
        }
      }
      expect(dead).toEqual([]);
    });
  }

  it("every docs/….md or README.md a source comment names exists", () => {
    const sources = readdirSync(join(ROOT, "src"), { recursive: true, encoding: "utf8" })
      .filter((name) => name.endsWith(".ts"))
      .map((name) => join(ROOT, "src", name));
    const missing: string[] = [];
    for (const source of sources) {
      for (const match of readFileSync(source, "utf8").matchAll(/\bdocs\/[\w./-]+\.md\b/g)) {
        if (!existsSync(join(ROOT, match[0]))) missing.push(`${relative(ROOT, source)}: ${match[0]}`);
      }
    }
    expect(missing).toEqual([]);
  });

  it("reads anchors the way GitHub makes them (sanity)", () => {
    const made = anchors("# A `store: false` title\n## Run it\n## Run it\n```\n# not a heading\n```\n");
    expect([...made]).toEqual(["a-store-false-title", "run-it", "run-it-1"]);
    expect(links("[a](docs/x.md#y) [b](https://example.com) `[c](z.md)`\n[d]: ./w.md\n")).toEqual([
      "docs/x.md#y",
      "./w.md",
    ]);
  });
});
