CREATE TABLE `session_activity` (
	`session_id` varbinary(3048) NOT NULL,
	`started_at` datetime(6) NOT NULL,
	`last_message_at` datetime(6),
	`chain_last_active` datetime(6) NOT NULL,
	CONSTRAINT `session_activity_session_id` PRIMARY KEY(`session_id`)
);
--> statement-breakpoint
DROP INDEX `idx_sessions_chain_last_active` ON `sessions`;--> statement-breakpoint
CREATE INDEX `idx_session_activity_order` ON `session_activity` (`chain_last_active`,`started_at`);