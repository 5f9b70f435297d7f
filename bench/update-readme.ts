/**
 * `npm run bench:readme`: rewrites the benchmark block of docs/benchmarks.md (between
 * `<!-- bench:start -->` and `<!-- bench:end -->`) from bench/results/latest.json.
 * Usage: `node bench/update-readme.ts [results.json] [page.md]` (defaults: the repository's).
 */
import { spawnSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { REPO_ROOT } from "../scripts/local-stack.ts";
import { BENCH_PAGE, renderReadmeBlock, replaceBlock } from "./readme-block.ts";
import type { ResultsFile } from "./results.ts";

/**
 * Rewrites `readmePath`'s block from `results` (a results file's path or its content). The
 * repository's own page is then formatted by Biome, so `npm run check` stays clean.
 * @throws {Error} on a missing file or marker.
 */
export function updateReadme(results: string | ResultsFile, readmePath: string): void {
  const parsed =
    typeof results === "string" ? (JSON.parse(readFileSync(results, "utf8")) as ResultsFile) : results;
  const readme = readFileSync(readmePath, "utf8");
  writeFileSync(readmePath, replaceBlock(readme, renderReadmeBlock(parsed)));
  if (resolve(readmePath) === join(REPO_ROOT, BENCH_PAGE)) {
    spawnSync(join(REPO_ROOT, "node_modules", ".bin", "biome"), ["format", "--write", readmePath], {
      cwd: REPO_ROOT,
      stdio: "ignore",
    });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const resultsPath = process.argv[2] ?? join(REPO_ROOT, "bench", "results", "latest.json");
  const readmePath = process.argv[3] ?? join(REPO_ROOT, BENCH_PAGE);
  try {
    updateReadme(resultsPath, readmePath);
    console.log(`updated the benchmark block of ${readmePath} from ${resultsPath}`);
  } catch (error) {
    console.error(`bench:readme failed: ${error instanceof Error ? error.message : String(error)}`);
    process.exit(1);
  }
}
