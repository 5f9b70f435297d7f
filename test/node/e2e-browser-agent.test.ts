/**
 * The web agent page (public/demo/, issue #16 items 4–5) in a real browser: headless Chromium
 * (test/support/browser.ts) loads it from `wrangler dev` (the local stack, demo on) through the
 * recording proxy, which lets the test cut the page's socket like a network failure (1006, no
 * close frame). The page gets a client secret from `POST /demo/client_secret`, opens the
 * WebSocket with the secret in the subprotocol offer (Chromium must accept the protocol Deltagate
 * echoes), and runs a tool loop whose tools execute in the page; then a long answer is cut
 * mid-stream, and the page reconnects with the same secret (same session) and resumes from the
 * last `sequence_number` it holds. Screenshot: test-results/browser/web-agent.png.
 */

import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchChromium, screenshotPath } from "../support/browser.ts";
import { useSharedStack } from "../support/e2e-stack.ts";

const e2e = useSharedStack();
let browser: Browser | undefined;
beforeAll(async () => {
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
});

/** What the page exposes as `window.deltagateAgent` (public/demo/agent.js), as JSON. */
interface AgentSnapshot {
  turns: Array<{
    what: string;
    responseId: string | null;
    status: string | null;
    endMs: number | null;
    stages: Record<string, number> | null;
    resumed: boolean;
  }>;
  received: Array<{ responseId: string; seq: number; socket: number }>;
  loopsFinished: number;
  errors: string[];
  stats: {
    socketsOpened: number;
    drops: number;
    resumes: number;
    protocol: string;
    sequenceErrors: unknown[];
  };
}

function snapshot(page: Page): Promise<AgentSnapshot> {
  return page.evaluate(() => {
    const agent = (
      globalThis as unknown as { deltagateAgent: { state: object; connection: { stats: object } } }
    ).deltagateAgent;
    return JSON.parse(JSON.stringify({ ...agent.state, stats: agent.connection.stats })) as AgentSnapshot;
  });
}

/** Waits until the page's state satisfies `predicate` (polled in the test, state read as JSON). */
async function until(page: Page, what: string, predicate: (s: AgentSnapshot) => boolean, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const state = await snapshot(page);
    if (predicate(state)) return state;
    if (Date.now() > deadline) {
      const { turns, loopsFinished, errors, stats } = state;
      const brief = { turns: turns.map((t) => [t.what, t.status]), loopsFinished, errors, stats };
      throw new Error(`timed out waiting for ${what}: ${JSON.stringify(brief)}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

describe("web agent page in Chromium", () => {
  it("runs a tool loop, streams, shows per-turn timing, and resumes after a dropped socket without a gap", async () => {
    const page = await browser!.newPage({ viewport: { width: 1100, height: 1300 } });
    const pageErrors: string[] = [];
    page.on("pageerror", (error) => pageErrors.push(error.message));
    const res = await page.goto(`${e2e.proxy.url}/demo/`);
    expect(res?.status()).toBe(200);
    await page.waitForSelector("body[data-ready='true']", { timeout: 30_000 });
    // Ready means loaded and connecting: the socket opens on its own time.
    await page.waitForSelector("#socket-state[data-state='open']", { timeout: 30_000 });

    // The handshake: the secret travelled in the offer, never in the URL; Chromium accepted the
    // protocol Deltagate echoed (a browser fails the handshake otherwise).
    const upgrade = e2e.proxy.upgrades[0]!;
    expect(upgrade.status).toBe(101);
    expect(upgrade.path).toBe("/v1/responses?timing=1");
    expect(upgrade.headers["sec-websocket-protocol"]).toMatch(
      /^deltagate-demo, openai-insecure-api-key\.ek_/,
    );
    expect((await snapshot(page)).stats.protocol).toBe("deltagate-demo");

    // A tool loop: one prompt, six tool rounds run in the page, then the answer.
    await page.fill("#prompt", "Look around the project: run `ls` [sim:tools=6]");
    await page.click("#send");
    const loop = await until(
      page,
      "the tool loop",
      (s) => s.loopsFinished === 1 && s.turns.every((t) => t.stages),
    );
    expect(loop.errors).toEqual([]);
    expect(loop.turns.map((t) => t.what)).toEqual([
      "prompt",
      ...Array.from({ length: 6 }, () => "tool output: exec_command"),
    ]);
    expect(loop.turns.every((t) => t.status === "completed")).toBe(true);
    // Per-stage timing of every turn, from deltagate.timing, shown in the turns table.
    for (const turn of loop.turns) {
      expect(turn.stages!.total).toBeGreaterThan(0);
      expect(turn.stages!.upstream_first_event).toBeGreaterThanOrEqual(0);
    }
    expect(await page.locator("#turns tr").count()).toBe(7);
    const toolEntries = await page.locator(".entry.tool").allTextContents();
    expect(toolEntries).toHaveLength(6);
    expect(toolEntries[0]).toContain('exec_command({"cmd":"ls"})');
    expect(toolEntries[0]).toContain("README.md\nnotes/\npackage.json\nsrc/");
    // The tool outputs went back as the only input of each next turn, chained.
    const creates = e2e.proxy.frames
      .filter((f) => f.from === "client")
      .map((f) => f.data as { type: string; input: Array<{ type: string; output?: string }> });
    expect(creates).toHaveLength(7);
    for (const create of creates.slice(1)) {
      expect(create.input.map((item) => item.type)).toEqual(["function_call_output"]);
    }
    expect(creates[1]!.input[0]!.output).toBe("README.md\nnotes/\npackage.json\nsrc/");
    expect(await page.locator(".entry.assistant").last().textContent()).toContain(
      "Done after 6 tool call(s)",
    );

    // A long answer, cut mid-stream like a network failure; the page reconnects and resumes.
    await page.fill("#prompt", "Now write a long summary, no tools [sim:tools=0] [sim:tokens=3000]");
    await page.click("#send");
    const before = await until(page, "40 events of the long answer", (s) => {
      const id = s.turns.at(-1)?.responseId;
      return id !== null && id !== undefined && s.received.filter((r) => r.responseId === id).length > 40;
    });
    e2e.proxy.dropConnection(1);
    const after = await until(page, "the resumed answer", (s) => s.loopsFinished === 2, 60_000);
    expect(after.errors).toEqual([]);
    expect(after.stats).toMatchObject({ socketsOpened: 2, drops: 1, resumes: 1, sequenceErrors: [] });
    const id = after.turns.at(-1)!.responseId!;
    expect(after.turns.at(-1)).toMatchObject({ status: "completed", resumed: true });
    const events = after.received.filter((r) => r.responseId === id);
    // Contiguous from 0 to the terminal event, each number once, across the two sockets.
    expect(events.map((r) => r.seq)).toEqual(events.map((_, i) => i));
    const onFirst = events.filter((r) => r.socket === 1);
    expect(onFirst.length).toBeGreaterThanOrEqual(before.received.filter((r) => r.responseId === id).length);
    expect(events.filter((r) => r.socket === 2).length).toBeGreaterThan(0);
    // The new socket (same secret, so the same session) asked exactly for what it missed.
    const resume = e2e.proxy.frames.find((f) => f.connection === 2 && f.from === "client")?.data;
    expect(resume).toEqual({
      type: "deltagate.response.resume",
      response_id: id,
      starting_after: onFirst.at(-1)!.seq,
    });
    expect(e2e.proxy.upgrades[1]?.headers["sec-websocket-protocol"]).toBe(
      upgrade.headers["sec-websocket-protocol"],
    );
    // The text on the page is the whole answer, as stored.
    const stored = (await (
      await fetch(`${e2e.stack.baseUrl}/responses/${id}`, {
        headers: { authorization: "Bearer dg-local-dev-key" },
      })
    ).json()) as { output: Array<{ content?: Array<{ text?: string }> }> };
    expect(await page.locator(".entry.assistant").last().textContent()).toBe(
      stored.output[0]?.content?.[0]?.text,
    );
    await expect.poll(async () => (await page.locator("#sequence").textContent()) ?? "").toBe("contiguous");

    await page.screenshot({ path: screenshotPath("web-agent.png"), fullPage: true });
    expect(pageErrors).toEqual([]);
    await page.close();
  });
});
