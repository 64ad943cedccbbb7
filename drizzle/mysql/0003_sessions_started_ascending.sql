DROP INDEX `idx_sessions_started` ON `sessions`;--> statement-breakpoint
CREATE INDEX `idx_sessions_started` ON `sessions` (`started_at`);