/** The Worker's routes: health, models, authentication and the upgrade contract (issue #2 §2). */
import { describe, expect, it } from "vitest";
import { KEY_A, workerFetch } from "../support/ws-client.ts";

describe("worker routes", () => {
  it("answers /healthz without auth", async () => {
    const res = await workerFetch("/healthz");
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: "ok" });
  });

  it("lists configured models for an authenticated key", async () => {
    const res = await workerFetch("/v1/models", { headers: { authorization: `Bearer ${KEY_A}` } });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { object: string; data: Array<{ id: string; object: string }> };
    expect(body.object).toBe("list");
    expect(body.data.map((m) => m.id)).toEqual(["deltagate-sim"]);
  });

  it("accepts the api-key header as an alternative to Bearer", async () => {
    const res = await workerFetch("/v1/models", { headers: { "api-key": KEY_A } });
    expect(res.status).toBe(200);
  });

  it("rejects a bad key with 401 JSON before any upgrade, without echoing it", async () => {
    const res = await workerFetch("/v1/responses", {
      headers: { upgrade: "websocket", authorization: "Bearer sk-not-a-real-key-123456" },
    });
    expect(res.status).toBe(401);
    expect(res.webSocket).toBeNull();
    const text = await res.text();
    expect(text).not.toContain("sk-not-a-real-key");
    const body = JSON.parse(text) as { error: { code: string; type: string; message: string } };
    expect(body.error.code).toBe("invalid_api_key");
  });

  it("rejects a missing key with 401 and says how to send one, unredacted (issue #15)", async () => {
    const res = await workerFetch("/v1/models");
    expect(res.status).toBe(401);
    const body = (await res.json()) as { error: { message: string } };
    expect(body.error.message).toBe(
      "Incorrect or missing API key. Send `Authorization: Bearer <key>` or an `api-key` header.",
    );
  });

  it("answers 426 JSON to a GET /v1/responses without Upgrade", async () => {
    const res = await workerFetch("/v1/responses", { headers: { authorization: `Bearer ${KEY_A}` } });
    expect(res.status).toBe(426);
    const body = (await res.json()) as { error: { code: string } };
    expect(body.error.code).toBe("upgrade_required");
  });

  it("rejects a malformed session id with 400", async () => {
    const res = await workerFetch("/v1/responses", {
      headers: { upgrade: "websocket", authorization: `Bearer ${KEY_A}`, "session-id": "bad id with spaces" },
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe("invalid_session_id");
  });

  it("answers unknown routes with a 404 JSON error", async () => {
    const res = await workerFetch("/v2/nothing");
    expect(res.status).toBe(404);
    expect(((await res.json()) as { error: { message: string } }).error.message).toContain("/v2/nothing");
  });
});
