ALTER TABLE `sessions` ADD `last_message_at` real;--> statement-breakpoint
ALTER TABLE `sessions` ADD `chain_last_active` real;--> statement-breakpoint
CREATE INDEX `idx_sessions_chain_last_active` ON `sessions` ("chain_last_active" DESC,"started_at" DESC,"id" DESC);