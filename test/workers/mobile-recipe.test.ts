/**
 * The mobile recipe (docs/browsers-and-phones.md), step by step, with the real Worker and session Durable Object: an
 * app's secret (bound to its session) opens a socket, a long store:true answer starts, the network
 * drops, and the secret expires while the phone is away. The reconnect with the old secret is
 * refused before the upgrade with 401 `client_secret_expired` and a message that says to mint a
 * new one; a new secret for the same session resumes the answer from the last `sequence_number`
 * the app holds (contiguous to its terminal event) and continues the chain on the new socket.
 */
import { describe, expect, it } from "vitest";
import { accepted, errorOf, mintSecret, signSecret, upgradeWith } from "../support/client-secrets.ts";
import { testId } from "../support/test-id.ts";
import type { Frame } from "../support/ws-client.ts";

const MODEL = "deltagate-sim";

describe("mobile recipe: network change, expired secret, same session", () => {
  it("refuses the expired secret with a clear code; a new secret for the session resumes and continues the chain", async () => {
    const sessionId = `user-42-chat-${testId()}`;
    const expiring = await signSecret({ sessionId, expiresAt: Math.floor(Date.now() / 1000) + 2 });
    const first = await accepted(await upgradeWith({ headers: { authorization: `Bearer ${expiring}` } }));
    first.send({ type: "response.create", model: MODEL, input: "A long answer [sim:tokens=2000]" });
    await first.until((frames) => frames.length > 30);
    const id = (first.frames[0] as unknown as { response: { id: string } }).response.id;
    first.close(1001); // the phone went through a tunnel
    const held = first.frames.map((f) => f.sequence_number as number);
    const last = held.at(-1)!;

    await new Promise((resolve) => setTimeout(resolve, 2_100));
    const refused = await upgradeWith({ headers: { authorization: `Bearer ${expiring}` } });
    expect(refused.status).toBe(401);
    const error = await errorOf(refused);
    expect(error.code).toBe("client_secret_expired");
    expect(error.message).toMatch(/Mint a new one/);

    // The backend mints again, for the same session: the app resumes, then continues the chain.
    const renewed = await mintSecret({ session: { id: sessionId } });
    expect(renewed.session.id).toBe(sessionId);
    const second = await accepted(
      await upgradeWith({
        protocols: ["responses", `openai-insecure-api-key.${renewed.value}`],
        headers: { "session-id": sessionId },
      }),
    );
    second.send({ type: "deltagate.response.resume", response_id: id, starting_after: last });
    await second.until((frames) => frames.some((f: Frame) => f.type === "response.completed"));
    const resumed = second.frames.map((f) => f.sequence_number as number);
    expect([...held, ...resumed]).toEqual([...held, ...resumed].map((_, i) => i));
    second.send({
      type: "response.create",
      model: MODEL,
      previous_response_id: id,
      input: "Thanks [sim:tokens=5]",
    });
    const next = await second.turn(1);
    expect(next.at(-1)).toMatchObject({ type: "response.completed", response: { previous_response_id: id } });
    second.close();
  });
});
