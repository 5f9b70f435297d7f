/**
 * Deltagate's Worker entry point: the Hono app handles HTTP, and the session Durable Object class
 * is exported for its binding (`SESSIONS` in wrangler.toml).
 */
import { createApp } from "./worker/app.ts";

export { SessionDurableObject } from "./session/session-do.ts";

export default createApp();
