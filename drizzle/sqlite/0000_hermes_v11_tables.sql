CREATE TABLE `messages` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`session_id` text NOT NULL,
	`role` text NOT NULL,
	`content` text,
	`tool_call_id` text,
	`tool_calls` text,
	`tool_name` text,
	`timestamp` real NOT NULL,
	`token_count` integer,
	`finish_reason` text,
	`reasoning` text,
	`reasoning_content` text,
	`reasoning_details` text,
	`codex_reasoning_items` text,
	`codex_message_items` text,
	FOREIGN KEY (`session_id`) REFERENCES `sessions`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `idx_messages_session` ON `messages` (`session_id`,`timestamp`);--> statement-breakpoint
CREATE TABLE `schema_version` (
	`version` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `sessions` (
	`id` text PRIMARY KEY NOT NULL,
	`source` text NOT NULL,
	`user_id` text,
	`model` text,
	`model_config` text,
	`system_prompt` text,
	`parent_session_id` text,
	`started_at` real NOT NULL,
	`ended_at` real,
	`end_reason` text,
	`message_count` integer DEFAULT 0,
	`tool_call_count` integer DEFAULT 0,
	`input_tokens` integer DEFAULT 0,
	`output_tokens` integer DEFAULT 0,
	`cache_read_tokens` integer DEFAULT 0,
	`cache_write_tokens` integer DEFAULT 0,
	`reasoning_tokens` integer DEFAULT 0,
	`billing_provider` text,
	`billing_base_url` text,
	`billing_mode` text,
	`estimated_cost_usd` real,
	`actual_cost_usd` real,
	`cost_status` text,
	`cost_source` text,
	`pricing_version` text,
	`title` text,
	`api_call_count` integer DEFAULT 0,
	`handoff_state` text,
	`handoff_platform` text,
	`handoff_error` text,
	FOREIGN KEY (`parent_session_id`) REFERENCES `sessions`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `idx_sessions_source` ON `sessions` (`source`);--> statement-breakpoint
CREATE INDEX `idx_sessions_parent` ON `sessions` (`parent_session_id`);--> statement-breakpoint
CREATE INDEX `idx_sessions_started` ON `sessions` ("started_at" DESC);--> statement-breakpoint
CREATE UNIQUE INDEX `idx_sessions_title_unique` ON `sessions` (`title`) WHERE "sessions"."title" IS NOT NULL;--> statement-breakpoint
CREATE INDEX `idx_sessions_handoff_pending` ON `sessions` (`handoff_state`,`started_at`);--> statement-breakpoint
CREATE TABLE `state_meta` (
	`key` text PRIMARY KEY NOT NULL,
	`value` text
);
--> statement-breakpoint
CREATE TABLE `telegram_dm_topic_bindings` (
	`chat_id` text NOT NULL,
	`thread_id` text NOT NULL,
	`user_id` text NOT NULL,
	`session_key` text NOT NULL,
	`session_id` text NOT NULL,
	`managed_mode` text DEFAULT 'auto' NOT NULL,
	`linked_at` real NOT NULL,
	`updated_at` real NOT NULL,
	PRIMARY KEY(`chat_id`, `thread_id`),
	FOREIGN KEY (`session_id`) REFERENCES `sessions`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `idx_telegram_dm_topic_bindings_session` ON `telegram_dm_topic_bindings` (`session_id`);--> statement-breakpoint
CREATE INDEX `idx_telegram_dm_topic_bindings_user` ON `telegram_dm_topic_bindings` (`user_id`,`chat_id`);--> statement-breakpoint
CREATE TABLE `telegram_dm_topic_mode` (
	`chat_id` text PRIMARY KEY NOT NULL,
	`user_id` text NOT NULL,
	`enabled` integer DEFAULT 1 NOT NULL,
	`activated_at` real NOT NULL,
	`updated_at` real NOT NULL,
	`has_topics_enabled` integer,
	`allows_users_to_create_topics` integer,
	`capability_checked_at` real,
	`intro_message_id` text,
	`pinned_message_id` text
);
