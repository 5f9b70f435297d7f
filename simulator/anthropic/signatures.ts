/**
 * Thinking-block signatures of the simulator's `/v1/messages`. Claude returns each `thinking`
 * block with an opaque `signature` and each `redacted_thinking` block as opaque `data`; in a tool
 * loop the blocks must come back unmodified, and Claude refuses a block whose signature does not
 * verify. Here a signature is an HMAC-SHA256 (per simulator instance) over the thinking text, and
 * redacted data carries its own HMAC, so any change to the text, signature or data is refused.
 * Source: https://docs.anthropic.com/en/docs/build-with-claude/extended-thinking (preserving
 * thinking blocks; `signature`; `redacted_thinking`).
 */
import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";

/** Signs and verifies thinking blocks for one simulator instance. */
export class ThinkingSigner {
  readonly #secret = randomBytes(32);

  /** The signature of a thinking block with text `thinking`. */
  sign(thinking: string): string {
    return createHmac("sha256", this.#secret).update(`thinking\n${thinking}`).digest("base64");
  }

  /** True when `signature` is this instance's signature of `thinking`. */
  verify(thinking: string, signature: string): boolean {
    return equal(this.sign(thinking), signature);
  }

  /** Opaque `data` of a redacted_thinking block (payload and its HMAC). */
  redactedData(seed: string): string {
    const payload = Buffer.from(`redacted:${seed}`).toString("base64");
    return `${payload}.${createHmac("sha256", this.#secret).update(`redacted\n${payload}`).digest("base64")}`;
  }

  /** True when `data` is redacted data this instance issued, unmodified. */
  verifyRedacted(data: string): boolean {
    const dot = data.lastIndexOf(".");
    if (dot <= 0) return false;
    const payload = data.slice(0, dot);
    const mac = createHmac("sha256", this.#secret).update(`redacted\n${payload}`).digest("base64");
    return equal(mac, data.slice(dot + 1));
  }
}

function equal(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}
