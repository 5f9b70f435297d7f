/**
 * `npm run bench:noise`: the noise floor of the bench's paired per-turn differences on this
 * machine — what "X over Y, paired per turn" reads when X and Y are the same thing. Two identical
 * floor relays (bench/floor/) and two identical Deltagates (default settings, log line on), each
 * its own `wrangler dev`, run interleaved rounds of the bench's loop (paired-loops.ts); it prints
 * each same-kind pair's differences and, for scale, Deltagate over the floor, paired the same way,
 * and for each pair also the difference of the two sides' own quantiles (`quantileGap`).
 * A bound on a paired difference (issue #27: p50 ≤ 1.5 ms, p99 ≤ 5 ms) can be shown only where it
 * lies well above the identical pair's figure.
 * Environment: `NOISE_ROUNDS` (default 8), `NOISE_STORE=1` (store:true; default store:false).
 */
import {
  deltagateStack,
  describeDiffs,
  describeGaps,
  floorStack,
  pairedDiffs,
  runPairedLoops,
} from "./paired-loops.ts";

const rounds = Number(process.env.NOISE_ROUNDS ?? 8);
const store = process.env.NOISE_STORE === "1";

const samples = await runPairedLoops(
  [
    ["floor", floorStack()],
    ["floor again", floorStack()],
    ["Deltagate", deltagateStack()],
    ["Deltagate again", deltagateStack()],
  ],
  { rounds, store },
);
console.log(`store:${store}, ${rounds} rounds × 30 turns, paired per turn (ms):`);
for (const [a, b] of [
  ["floor again", "floor"],
  ["Deltagate again", "Deltagate"],
  ["Deltagate", "floor"],
  ["Deltagate again", "floor again"],
] as const) {
  console.log(`  ${a} over ${b}: ${describeDiffs(pairedDiffs(samples.of(a), samples.of(b)))}`);
  console.log(`    its quantiles over ${b}'s: ${describeGaps(samples.of(a), samples.of(b))}`);
}
