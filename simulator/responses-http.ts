/**
 * `POST /v1/responses` over HTTP: JSON Response (`stream` false/absent) or SSE
 * (`event: <type>\ndata: <json>\n\n`, no `[DONE]`). `previous_response_id` resolves only
 * against stored responses; prefix caching is keyed by `prompt_cache_key`. Honours the
 * `fail=` and `delay_ms=` directives.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { invalidRequest, toSimError } from "./errors.ts";
import { midstreamCutIndex } from "./events.ts";
import { baseHeaders, receivePost, sendError, sendJson, trackDisconnect, writeFlushed } from "./http-util.ts";
import { prepareTurn } from "./responses-turn.ts";
import type { SimState } from "./state.ts";
import { runSteps } from "./stream-runner.ts";
import { waitUntil } from "./timing.ts";

/** Handles one `POST /v1/responses` request end to end (never throws). */
export async function handleResponsesHttp(
  state: SimState,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const { body, record, modelStartMs, finish } = await receivePost(state, req, "http", "/v1/responses");

  if (!body) {
    const err = invalidRequest("We could not parse the JSON body of your request.");
    sendError(res, err);
    finish(err.status);
    return;
  }
  const tracker = trackDisconnect(res, record, state.recorder);
  let turn: ReturnType<typeof prepareTurn>;
  try {
    turn = prepareTurn(
      state,
      body,
      {
        resolvePrevious: (id) => state.store.get(id),
        caches: [state.prefix.get(typeof body.prompt_cache_key === "string" ? body.prompt_cache_key : null)],
        websocket: false,
      },
      record,
    );
  } catch (e) {
    const err = toSimError(e);
    sendError(res, err);
    finish(err.status, `${err.code ?? err.type} `);
    return;
  }
  const usage = turn.final.usage;
  const note = `ctx=${record.contextItemCount} in=${usage?.input_tokens} cached=${usage?.input_tokens_details.cached_tokens} out=${usage?.output_tokens} `;
  const midstream = turn.directives.fail?.kind === "midstream";

  const hold = turn.directives.hold;
  const held = hold ? () => state.holds.wait(hold, tracker.signal) : undefined;
  if (body.stream !== true) {
    const last = turn.steps[turn.steps.length - 1];
    await held?.();
    await waitUntil(modelStartMs, last?.atMs ?? 0, tracker.signal);
    if (tracker.signal.aborted) return finish(null, "client went away ");
    if (midstream) {
      record.simulatedFailure = "midstream";
      tracker.drop();
      return finish(null, "simulated drop ");
    }
    sendJson(res, 200, turn.final);
    if (turn.store) state.store.put(turn.node);
    return finish(200, note);
  }

  res.writeHead(200, {
    ...baseHeaders(),
    "content-type": "text/event-stream; charset=utf-8",
    "cache-control": "no-cache",
    connection: "keep-alive",
  });
  res.flushHeaders();
  const stopBefore = midstream ? midstreamCutIndex(turn.steps) : turn.steps.length;
  const done = await runSteps(
    turn.steps,
    modelStartMs,
    tracker.signal,
    (step) => writeFlushed(res, `event: ${step.event.type}\ndata: ${JSON.stringify(step.event)}\n\n`),
    stopBefore,
    held,
  );
  if (!done) return finish(200, "client went away mid-stream ");
  if (midstream) {
    record.simulatedFailure = "midstream";
    tracker.drop();
    return finish(200, "simulated mid-stream drop ");
  }
  res.end();
  if (turn.store) state.store.put(turn.node);
  finish(200, note);
}
