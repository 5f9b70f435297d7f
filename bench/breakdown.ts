/**
 * `npm run bench:breakdown`: what Deltagate's default features add to a turn over the floor relay
 * (bench/floor/), each measured by turning it off in a twin of the default Deltagate in the same
 * interleaved rounds (paired-loops.ts): the per-turn log line (`TURN_LOG=false`) and the default
 * safety checks (`SAFETY={"mode":"off"}`), apart and together; and a twin with wrangler's devtools
 * inspector attached (`inspectorPort`, which `wrangler dev` itself always attaches: what the local
 * stack leaves off, scripts/wrangler-dev.ts). What is left over the floor with
 * both off is the rest of Deltagate's own cost (admission and metering, the durable commits, the
 * store:false chain, context, transparent deltas, the event fold). It prints each stack's latency
 * over the floor and over the default Deltagate, paired per turn, its quantiles over the floor's
 * (`quantileGap`), and its runtime CPU per turn (over all rounds; the runtime's workerd less
 * wrangler dev's proxy, bench/proc-stats.ts).
 * Read the differences against `npm run bench:noise`'s, on the same machine.
 * Environment: `BREAKDOWN_ROUNDS` (default 8), `BREAKDOWN_STORE=1` (store:true; default store:false).
 */
import {
  deltagateStack,
  describeDiffs,
  floorStack,
  pairedDiffs,
  reportOverFloor,
  runPairedLoops,
} from "./paired-loops.ts";

const rounds = Number(process.env.BREAKDOWN_ROUNDS ?? 8);
const store = process.env.BREAKDOWN_STORE === "1";
const NO_LOG = { TURN_LOG: "false" };
const NO_SAFETY = { SAFETY: JSON.stringify({ mode: "off" }) };

const samples = await runPairedLoops(
  [
    ["floor", floorStack()],
    ["Deltagate", deltagateStack()],
    ["no log line", deltagateStack(NO_LOG)],
    ["no safety checks", deltagateStack(NO_SAFETY)],
    ["neither", deltagateStack({ ...NO_LOG, ...NO_SAFETY })],
    ["with the inspector", deltagateStack({}, { inspectorPort: 0 })],
  ],
  { rounds, store },
);
reportOverFloor(
  samples,
  ["Deltagate", "no log line", "no safety checks", "neither", "with the inspector"],
  { rounds, store },
  (name) =>
    name === "Deltagate"
      ? []
      : [`over Deltagate: ${describeDiffs(pairedDiffs(samples.of(name), samples.of("Deltagate")))}`],
);
