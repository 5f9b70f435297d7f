-- Background responses (version 11, src/session/http-transport.ts; docs/background.md): a response
-- created with `background: true` says so on its Response object, is never cancelled for having no
-- client attached, and is what webhooks announce when it ends.
ALTER TABLE responses ADD COLUMN background INTEGER NOT NULL DEFAULT 0;
