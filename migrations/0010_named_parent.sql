-- A resend chained on a warm-up (version 10, src/resend/warm-up.ts): the response continues the
-- chain its input matched (parent_id, implicit_parent = 1) while the client named the warm-up it
-- was chained on; named_parent_id keeps that id, the previous_response_id its Response object shows.
ALTER TABLE responses ADD COLUMN named_parent_id TEXT;
