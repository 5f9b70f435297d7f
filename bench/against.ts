/**
 * `npm run bench:against -- <commit>`: today's tree beside an earlier commit of Deltagate, and the
 * floor relay (bench/floor/), in the same interleaved rounds (paired-loops.ts): what a change
 * bought, as a paired difference and as a ratio of the two sides' cost over the floor, measured
 * side by side on one machine (issue #27: "the same comparison on the main before the change").
 * The earlier commit is checked out into a git worktree under `.wrangler/against/` and run by
 * the same local stack as the tree (scripts/local-stack.ts), so only the Worker differs;
 * `AGAINST_INSPECTOR=1` also runs it with wrangler's devtools inspector attached, as the
 * `wrangler dev` command ran every stack before the local stack left it off (docs/local-stack.md).
 * Invariant: the worktree is removed when the run ends, throws or is stopped by a signal, and
 * replaced by the next run if a killed one left it.
 * Environment: `AGAINST_ROUNDS` (default 8), `AGAINST_STORE=1` (store:true; default store:false).
 */
import { execFileSync } from "node:child_process";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { DELTAGATE_WORKER, REPO_ROOT, startLocalStack } from "../scripts/local-stack.ts";
import { quantile } from "./metrics.ts";
import {
  cpuOverFloor,
  deltagateStack,
  describeDiffs,
  floorStack,
  PAIRED_MODEL,
  pairedDiffs,
  reportOverFloor,
  runPairedLoops,
  type StackStarter,
} from "./paired-loops.ts";

const commit = process.argv[2];
if (!commit) {
  console.error(
    "usage: npm run bench:against -- <commit>   (AGAINST_ROUNDS, AGAINST_STORE=1, AGAINST_INSPECTOR=1)",
  );
  process.exit(2);
}
const rounds = Number(process.env.AGAINST_ROUNDS ?? 8);
const store = process.env.AGAINST_STORE === "1";
const inspector = process.env.AGAINST_INSPECTOR === "1";

const git = (...args: string[]): string =>
  execFileSync("git", args, { cwd: REPO_ROOT, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] }).trim();
let sha: string;
try {
  sha = git("rev-parse", "--short", `${commit}^{commit}`);
} catch {
  console.error(`bench:against: ${JSON.stringify(commit)} is not a commit of this repository`);
  process.exit(2);
}
// Inside the repository (ignored by git), so the Worker's imports resolve from its node_modules.
const dir = join(".wrangler", "against", sha);
// A directory left by a run that was killed outright (SIGKILL runs no hook) is replaced.
rmSync(join(REPO_ROOT, dir), { recursive: true, force: true });
git("worktree", "prune");
git("worktree", "add", "--force", "--detach", dir, sha);
// Removed however the run ends: returned, thrown, or stopped by a signal (runPairedLoops exits on
// SIGINT, SIGTERM and SIGHUP, which runs this hook; an `exit` hook must be synchronous).
process.once("exit", () => {
  try {
    git("worktree", "remove", "--force", dir);
  } catch {
    // already gone
  }
});

/** The Worker at `dir` (the earlier commit), with wrangler's inspector if `inspectorPort` is set. */
const earlier =
  (inspectorPort?: number): StackStarter =>
  (routes, common) =>
    startLocalStack({
      ...common,
      ...(inspectorPort === undefined ? {} : { inspectorPort }),
      vars: { UPSTREAMS: routes, MODELS: PAIRED_MODEL },
      worker: {
        config: join(dir, DELTAGATE_WORKER.config),
        sources: DELTAGATE_WORKER.sources.map((source) => join(dir, source)),
      },
    });

const before = `${sha}`;
const beforeInspector = `${sha} with the inspector`;
const samples = await runPairedLoops<string>(
  [
    ["floor", floorStack()],
    [before, earlier()],
    ...(inspector ? ([[beforeInspector, earlier(0)]] as const) : []),
    ["this tree", deltagateStack()],
  ],
  { rounds, store },
);
const sides = [before, ...(inspector ? [beforeInspector] : []), "this tree"];
reportOverFloor(samples, sides, { rounds, store });
const p50OverFloor = (name: string): number =>
  quantile(pairedDiffs(samples.of(name), samples.of("floor")), 0.5);
for (const name of sides.slice(0, -1)) {
  console.log(
    `  this tree over ${name}: ${describeDiffs(pairedDiffs(samples.of("this tree"), samples.of(name)))}`,
  );
  const cpuNow = cpuOverFloor(samples, "this tree");
  const cpuThen = cpuOverFloor(samples, name);
  const cpuRatio = cpuNow === null || cpuThen === null ? "?" : `${(cpuNow / cpuThen).toFixed(2)}×`;
  const p50Ratio = (p50OverFloor("this tree") / p50OverFloor(name)).toFixed(2);
  console.log(`    cost over the floor, this tree's / ${name}'s: p50 ${p50Ratio}×, runtime CPU ${cpuRatio}`);
}
