/**
 * The affinity key of a stateless conversation (src/worker/affinity.ts): the same for every
 * resend of one conversation (more items, ids and statuses added by the client), different for
 * another conversation or other settings; `prompt_cache_key` alone when set.
 */
import { describe, expect, it } from "vitest";
import { type CreateRequest, createRequest } from "../../../src/protocol/create-request.ts";
import { affinitySessionId } from "../../../src/worker/affinity.ts";

const request = (body: Record<string, unknown>): CreateRequest => createRequest.parse(body);
const base = { model: "m", instructions: "Be brief.", tools: [{ type: "function", name: "f" }] };
const first = { role: "user", content: "hello" };

describe("affinitySessionId", () => {
  it("is stable across resends of one conversation", () => {
    const key = affinitySessionId(request({ ...base, input: [first] }));
    expect(key).toMatch(/^aff_[0-9a-f]{32}$/);
    const resend = [
      { ...first, id: "msg_1" },
      {
        type: "message",
        role: "assistant",
        content: [{ type: "output_text", text: "hi" }],
        status: "completed",
      },
      { role: "user", content: "more" },
    ];
    expect(affinitySessionId(request({ ...base, input: resend }))).toBe(key);
    expect(affinitySessionId(request({ ...base, input: "hello" }))).toBe(key); // a string is that message
    const developer = [{ role: "developer", content: "rules" }, first];
    const withDeveloper = affinitySessionId(request({ ...base, input: developer }));
    expect(
      affinitySessionId(request({ ...base, input: [...developer, { role: "user", content: "x" }] })),
    ).toBe(withDeveloper);
  });

  it("differs for another first message, other instructions, tools or model", () => {
    const key = affinitySessionId(request({ ...base, input: [first] }));
    expect(affinitySessionId(request({ ...base, input: [{ role: "user", content: "bye" }] }))).not.toBe(key);
    expect(affinitySessionId(request({ ...base, instructions: "Other.", input: [first] }))).not.toBe(key);
    expect(affinitySessionId(request({ ...base, tools: [], input: [first] }))).not.toBe(key);
    expect(affinitySessionId(request({ ...base, model: "n", input: [first] }))).not.toBe(key);
  });

  it("keys on prompt_cache_key alone when the request sets one", () => {
    const a = affinitySessionId(request({ ...base, prompt_cache_key: "conv-1", input: [first] }));
    const b = affinitySessionId(request({ model: "x", prompt_cache_key: "conv-1", input: "other" }));
    expect(a).toBe(b);
    expect(affinitySessionId(request({ ...base, prompt_cache_key: "conv-2", input: [first] }))).not.toBe(a);
  });
});
