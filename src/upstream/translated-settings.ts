/**
 * The settings no translating route (Anthropic Messages, Gemini) can honour, refused alike: the
 * 400 `unsupported_content` naming the parameter, before the turn starts (the adapter's
 * `refusal`: route-capabilities.ts `translatedRefusal`). Owns `settingRefuser` and
 * `refuseUntranslatable`.
 * Invariant: a setting that changes what the model does and has no equivalent is refused, never
 * dropped (docs/protocol.md "Create parameters: where each one goes").
 */
import type { TurnSettings } from "../protocol/create-request.ts";
import { isRecord } from "../protocol/json.ts";
import { unsupportedContent } from "./content-parts.ts";
import { ENCRYPTED_REASONING } from "./encrypted-reasoning.ts";
import type { UpstreamError } from "./upstream.ts";

/** Makes the refusal of `what` (parameter `param`) by `upstream` ("an Anthropic upstream"). */
export type SettingRefuser = (param: string, what: string) => UpstreamError;

/** The refusal maker of `upstream`, as a client reads it ("a Gemini upstream"). */
export function settingRefuser(upstream: string): SettingRefuser {
  return (param, what) =>
    unsupportedContent(`${what} is not supported by ${upstream} (parameter '${param}').`, param);
}

/**
 * Throws the refusal of the first setting of `s` no translating route honours: `max_tool_calls`,
 * `top_logprobs` > 0, `text.verbosity` other than medium, an `include` other than
 * `reasoning.encrypted_content`, `service_tier` other than auto/default, a temperature above the
 * provider's range.
 * @param temperature the provider's highest temperature and its name ("Anthropic").
 */
export function refuseUntranslatable(
  s: Partial<TurnSettings>,
  refuse: SettingRefuser,
  temperature: { max: number; provider: string },
): void {
  if (typeof s.max_tool_calls === "number") throw refuse("max_tool_calls", "max_tool_calls");
  if (typeof s.top_logprobs === "number" && s.top_logprobs > 0) throw refuse("top_logprobs", "top_logprobs");
  const verbosity = isRecord(s.text) ? s.text.verbosity : undefined;
  if (verbosity !== undefined && verbosity !== null && verbosity !== "medium") {
    throw refuse("text.verbosity", `text.verbosity '${String(verbosity)}'`);
  }
  for (const value of s.include ?? []) {
    if (value !== ENCRYPTED_REASONING) throw refuse("include", `include '${value}'`);
  }
  if (typeof s.service_tier === "string" && s.service_tier !== "auto" && s.service_tier !== "default") {
    throw refuse("service_tier", `service_tier '${s.service_tier}'`);
  }
  if (typeof s.temperature === "number" && s.temperature > temperature.max) {
    throw refuse(
      "temperature",
      `A temperature above ${temperature.max} (${temperature.provider}'s range is 0 to ${temperature.max})`,
    );
  }
}
