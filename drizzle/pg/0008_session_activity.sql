ALTER TABLE "sessions" ADD COLUMN "last_message_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "sessions" ADD COLUMN "chain_last_active" timestamp with time zone;--> statement-breakpoint
CREATE INDEX "idx_sessions_chain_last_active" ON "sessions" USING btree ("chain_last_active" DESC NULLS LAST,"started_at" DESC NULLS LAST,"id" COLLATE "C" DESC NULLS LAST);