/**
 * Gemini API wire shapes: the request `contents` / `parts` Deltagate sends to
 * `streamGenerateContent`, and the zod schemas of what comes back (each SSE `data:` is a
 * `GenerateContentResponse`; an error is Google's `{error: {code, message, status, details}}`),
 * the trust boundary of the adapter. Loose: unknown fields pass, only a wrong type of a field
 * Deltagate reads is rejected.
 * Source: https://ai.google.dev/api/generate-content (GenerateContentResponse, Candidate,
 * FinishReason, UsageMetadata), https://ai.google.dev/api/caching#Content (Content, Part,
 * FunctionCall, FunctionResponse), https://ai.google.dev/gemini-api/docs/troubleshooting (error
 * statuses).
 */
import { z } from "zod";
import type { Json } from "../../protocol/json.ts";

/** A request part. `thoughtSignature` rides on the part it was received on (thought-signatures.ts). */
export type GeminiPart = (
  | { text: string; thought?: boolean }
  | { inlineData: { mimeType: string; data: string } }
  | { fileData: { mimeType?: string; fileUri: string } }
  | { functionCall: { id?: string; name: string; args: Json } }
  | { functionResponse: { id?: string; name: string; response: Json } }
) & { thoughtSignature?: string };

/** A request content: the user's or the model's turn. */
export interface GeminiContent {
  role: "user" | "model";
  parts: GeminiPart[];
}

/** A function declaration (`tools[].functionDeclarations[]`). */
export interface FunctionDeclaration {
  name: string;
  description?: string;
  /** The JSON Schema of the arguments, as the client wrote it. */
  parametersJsonSchema?: Json;
}

const part = z.looseObject({
  text: z.string().nullish(),
  thought: z.boolean().nullish(),
  thoughtSignature: z.string().nullish(),
  functionCall: z
    .looseObject({
      id: z.string().nullish(),
      name: z.string().nullish(),
      args: z.record(z.string(), z.unknown()).nullish(),
    })
    .nullish(),
});

/** A streamed part. */
export type StreamPart = z.infer<typeof part>;

const usage = z.looseObject({
  promptTokenCount: z.number().nullish(),
  cachedContentTokenCount: z.number().nullish(),
  candidatesTokenCount: z.number().nullish(),
  thoughtsTokenCount: z.number().nullish(),
  toolUsePromptTokenCount: z.number().nullish(),
  totalTokenCount: z.number().nullish(),
});

/** `usageMetadata` as Gemini reports it. */
export type GeminiUsage = z.infer<typeof usage>;

/** One streamed `GenerateContentResponse`. */
export const streamChunk = z.looseObject({
  candidates: z
    .array(
      z.looseObject({
        content: z.looseObject({ parts: z.array(part).nullish() }).nullish(),
        finishReason: z.string().nullish(),
        finishMessage: z.string().nullish(),
      }),
    )
    .nullish(),
  promptFeedback: z.looseObject({ blockReason: z.string().nullish() }).nullish(),
  usageMetadata: usage.nullish(),
  modelVersion: z.string().nullish(),
  responseId: z.string().nullish(),
});

/** A parsed chunk. */
export type StreamChunk = z.infer<typeof streamChunk>;

/** Google's error envelope (HTTP body, or an in-stream `data:` chunk). */
export const errorEnvelope = z.looseObject({
  error: z.looseObject({
    code: z.number().nullish(),
    message: z.string().nullish(),
    status: z.string().nullish(),
    details: z
      .array(z.looseObject({ "@type": z.string().nullish(), retryDelay: z.string().nullish() }))
      .nullish(),
  }),
});

/** A parsed error envelope. */
export type ErrorEnvelope = z.infer<typeof errorEnvelope>;
