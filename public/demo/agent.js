// @ts-check
/**
 * The web agent page (public/demo/index.html): a multi-turn tool loop over one Deltagate WebSocket,
 * in plain browser JavaScript. Owns the loop and what the page shows:
 * - a prompt becomes a `response.create` (store:true, chained with `previous_response_id`, the
 *   tools of tools.js); each completed response's function calls run in the page and their
 *   outputs go back as the next turn's only input, until a response asks for no tool;
 * - text streams into the transcript as `response.output_text.delta` events arrive;
 * - each turn's latency: measured by the page (first event, end) and Deltagate's own per-stage
 *   timing (the `deltagate.timing` event after each terminal event; the socket opts in with
 *   `?timing=1`, see the README's "Per-stage timing");
 * - the connection (connection.js): session, socket state, secret expiry, drops and resumes.
 * `window.deltagateAgent` exposes the state (turns, received sequence numbers, connection stats)
 * for the browser tests (test/node/e2e-browser-agent.test.ts) and for curious developers.
 * Invariant: at most one turn is in flight; the form is disabled while the loop runs.
 */
import { AgentConnection } from "./connection.js";
import { createFileSystem, runTool, TOOL_DEFINITIONS } from "./tools.js";

/** Most tool rounds one prompt may take (a model that never stops asking is cut off). */
const MAX_TOOL_ROUNDS = 25;
/** The stages shown per turn, in order (names of src/session/turn-timing.ts). */
const SHOWN_STAGES = ["edge", "upstream_connect", "upstream_first_event", "generation", "commit"];

/**
 * @typedef {import("./connection.js").ServerEvent} ServerEvent
 * @typedef {{ n: number, what: string, responseId: string | null, sentAt: number, firstEventMs: number | null,
 *   endMs: number | null, status: string | null, stages: Record<string, number> | null, resumed: boolean }} Turn
 * @typedef {{ type: string, call_id?: string, name?: string, arguments?: string, [field: string]: unknown }} OutputItem
 */

const $ = (/** @type {string} */ id) => /** @type {HTMLElement} */ (document.getElementById(id));
const form = /** @type {HTMLFormElement} */ ($("prompt-form"));
const promptInput = /** @type {HTMLTextAreaElement} */ ($("prompt"));
const modelSelect = /** @type {HTMLSelectElement} */ ($("model"));
const sendButton = /** @type {HTMLButtonElement} */ ($("send"));
const dropButton = /** @type {HTMLButtonElement} */ ($("drop"));

const state = {
  /** @type {Turn[]} */
  turns: [],
  /** @type {Array<{ responseId: string, seq: number, socket: number }>} every numbered event received */
  received: [],
  /** @type {string | null} */
  previousResponseId: null,
  busy: false,
  toolRounds: 0,
  /** Prompts whose loop ended (a response that asked for no tool, or an error). */
  loopsFinished: 0,
  /** @type {string[]} */
  errors: [],
};
const fs = createFileSystem();
/** @type {Map<string, HTMLElement>} the assistant bubble of each response */
const bubbles = new Map();

const connection = new AgentConnection({
  origin: location.origin,
  onEvent: handle,
  onState: (connectionState, detail) => {
    $("socket-state").textContent = connectionState;
    $("socket-state").dataset.state = connectionState;
    if (connectionState === "error") showError(detail);
    renderStatus();
  },
});
Object.assign(window, { deltagateAgent: { state, connection } });

/** Appends a transcript entry. */
function say(/** @type {string} */ role, /** @type {string} */ text) {
  const entry = document.createElement("div");
  entry.className = `entry ${role}`;
  entry.textContent = text;
  $("transcript").append(entry);
  entry.scrollIntoView({ block: "end" });
  return entry;
}

function showError(/** @type {string} */ message) {
  state.errors.push(message);
  say("error", message);
}

/** Sends one turn: `input` chained on the previous response. */
function sendTurn(/** @type {unknown[]} */ input, /** @type {string} */ what) {
  /** @type {Turn} */
  const turn = {
    n: state.turns.length + 1,
    what,
    responseId: null,
    sentAt: performance.now(),
    firstEventMs: null,
    endMs: null,
    status: null,
    stages: null,
    resumed: false,
  };
  state.turns.push(turn);
  resumesAtSend.set(turn, connection.stats.resumes);
  connection.send({
    type: "response.create",
    model: modelSelect.value,
    store: true,
    input,
    tools: TOOL_DEFINITIONS,
    ...(state.previousResponseId ? { previous_response_id: state.previousResponseId } : {}),
  });
  renderTurns();
}

/** Resumes counted when each turn was sent (a turn finished after a resume is marked). */
const resumesAtSend = new WeakMap();
const resumesBefore = (/** @type {Turn} */ turn) => /** @type {number} */ (resumesAtSend.get(turn) ?? 0);

/** The turn in flight (the last one sent). */
const currentTurn = () => state.turns.at(-1);

function handle(/** @type {ServerEvent} */ event) {
  const turn = currentTurn();
  if (typeof event.sequence_number === "number" && connection.current) {
    state.received.push({
      responseId: connection.current.id,
      seq: event.sequence_number,
      socket: connection.stats.socketsOpened,
    });
  }
  switch (event.type) {
    case "response.created":
      if (turn && event.response) {
        turn.responseId = event.response.id;
        turn.firstEventMs = performance.now() - turn.sentAt;
      }
      break;
    case "response.output_text.delta": {
      const id = connection.current?.id ?? "";
      let bubble = bubbles.get(id);
      if (!bubble) {
        bubble = say("assistant", "");
        bubbles.set(id, bubble);
      }
      bubble.textContent += String(event.delta ?? "");
      break;
    }
    case "response.completed":
    case "response.failed":
    case "response.incomplete":
      finishTurn(turn, event);
      break;
    case "deltagate.timing": {
      const timed = state.turns.find((t) => t.responseId === event.response_id);
      if (timed) timed.stages = /** @type {Record<string, number>} */ (event.stages);
      renderTurns();
      break;
    }
    case "error": {
      const error = /** @type {{ message?: string, code?: string } | undefined} */ (event.error);
      showError(`Deltagate: ${error?.code ?? "error"}: ${error?.message ?? ""}`);
      endLoop();
      break;
    }
  }
  renderStatus();
}

function finishTurn(/** @type {Turn | undefined} */ turn, /** @type {ServerEvent} */ event) {
  const response =
    /** @type {{ id: string, status: string, output: OutputItem[], error?: { message?: string } }} */ (
      event.response
    );
  if (turn) {
    turn.endMs = performance.now() - turn.sentAt;
    turn.status = response.status;
    // Its deltagate.timing went to the socket that asked for the turn, which was dropped.
    turn.resumed = connection.stats.resumes > resumesBefore(turn);
  }
  state.previousResponseId = response.id;
  renderTurns();
  if (response.status !== "completed") {
    showError(`Response ${response.status}${response.error?.message ? `: ${response.error.message}` : ""}`);
    return endLoop();
  }
  const calls = response.output.filter((item) => item.type === "function_call");
  if (calls.length === 0) return endLoop();
  if (++state.toolRounds > MAX_TOOL_ROUNDS) {
    showError(`Stopped after ${MAX_TOOL_ROUNDS} tool rounds.`);
    return endLoop();
  }
  const outputs = calls.map((call) => {
    const output = runTool(call.name ?? "", call.arguments ?? "{}", fs);
    say("tool", `${call.name}(${call.arguments}) →\n${output}`);
    return { type: "function_call_output", call_id: call.call_id, output };
  });
  sendTurn(outputs, calls.map((call) => `tool output: ${call.name}`).join(", "));
}

function endLoop() {
  state.busy = false;
  state.loopsFinished++;
  sendButton.disabled = false;
  promptInput.disabled = false;
}

/** Ms with one decimal, or a dash. */
const ms = (/** @type {number | null | undefined} */ value) =>
  typeof value === "number" ? value.toFixed(1) : "–";

function renderTurns() {
  const rows = state.turns.map((turn) => {
    const row = document.createElement("tr");
    const cells = [
      String(turn.n),
      turn.what,
      turn.resumed ? `${turn.status} (resumed; its timing went to the dropped socket)` : (turn.status ?? "…"),
      ms(turn.firstEventMs),
      ms(turn.endMs),
      ms(turn.stages?.total),
      ...SHOWN_STAGES.map((stage) => ms(turn.stages?.[stage])),
    ];
    for (const text of cells) {
      const cell = document.createElement("td");
      cell.textContent = text;
      row.append(cell);
    }
    return row;
  });
  $("turns").replaceChildren(...rows);
}

function renderStatus() {
  const { stats } = connection;
  const left = connection.secretSecondsLeft();
  $("session").textContent = connection.sessionId ?? "–";
  $("protocol").textContent = stats.protocol || "–";
  $("secret-expiry").textContent = Number.isNaN(left) ? "–" : `${Math.max(0, Math.round(left))} s`;
  $("sockets").textContent =
    `${stats.socketsOpened} opened, ${stats.drops} dropped, ${stats.resumes} resumed`;
  $("sequence").textContent =
    stats.sequenceErrors.length === 0 ? "contiguous" : `${stats.sequenceErrors.length} gap(s) or repeat(s)`;
}

form.addEventListener("submit", (submit) => {
  submit.preventDefault();
  const text = promptInput.value.trim();
  if (!text || state.busy) return;
  state.busy = true;
  state.toolRounds = 0;
  sendButton.disabled = true;
  promptInput.disabled = true;
  say("user", text);
  promptInput.value = "";
  sendTurn([{ type: "message", role: "user", content: text }], "prompt");
});
dropButton.addEventListener("click", () => connection.drop());
setInterval(renderStatus, 1000);

/** Fills the model list (with the secret, as any API call of the page would be). */
async function loadModels() {
  const secret = connection.secret?.value;
  if (!secret) return;
  const res = await fetch("/v1/models", { headers: { authorization: `Bearer ${secret}` } });
  if (!res.ok) return;
  const body = /** @type {{ data: Array<{ id: string }> }} */ (await res.json());
  modelSelect.replaceChildren(
    ...body.data.map(({ id }) =>
      Object.assign(document.createElement("option"), { value: id, textContent: id }),
    ),
  );
}

await connection.start();
await loadModels();
sendButton.disabled = false;
document.body.dataset.ready = "true";
