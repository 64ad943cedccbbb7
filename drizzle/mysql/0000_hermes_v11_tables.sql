CREATE TABLE `messages` (
	`id` bigint AUTO_INCREMENT NOT NULL,
	`session_id` varbinary(3048) NOT NULL,
	`role` longblob NOT NULL,
	`content` longtext CHARACTER SET utf8mb4 COLLATE utf8mb4_bin,
	`tool_call_id` longblob,
	`tool_calls` longtext CHARACTER SET utf8mb4 COLLATE utf8mb4_bin,
	`tool_name` longblob,
	`timestamp` datetime(6) NOT NULL,
	`token_count` int,
	`finish_reason` longblob,
	`reasoning` longtext CHARACTER SET utf8mb4 COLLATE utf8mb4_bin,
	`reasoning_content` longtext CHARACTER SET utf8mb4 COLLATE utf8mb4_bin,
	`reasoning_details` longtext CHARACTER SET utf8mb4 COLLATE utf8mb4_bin,
	`codex_reasoning_items` longtext CHARACTER SET utf8mb4 COLLATE utf8mb4_bin,
	`codex_message_items` longtext CHARACTER SET utf8mb4 COLLATE utf8mb4_bin,
	CONSTRAINT `messages_id` PRIMARY KEY(`id`)
);
--> statement-breakpoint
CREATE TABLE `sessions` (
	`id` varbinary(3048) NOT NULL,
	`source` varbinary(1024) NOT NULL,
	`user_id` longblob,
	`model` longblob,
	`model_config` longtext CHARACTER SET utf8mb4 COLLATE utf8mb4_bin,
	`system_prompt` longtext CHARACTER SET utf8mb4 COLLATE utf8mb4_bin,
	`parent_session_id` varbinary(3048),
	`started_at` datetime(6) NOT NULL,
	`ended_at` datetime(6),
	`end_reason` longblob,
	`message_count` bigint NOT NULL DEFAULT 0,
	`tool_call_count` bigint NOT NULL DEFAULT 0,
	`input_tokens` bigint NOT NULL DEFAULT 0,
	`output_tokens` bigint NOT NULL DEFAULT 0,
	`cache_read_tokens` bigint NOT NULL DEFAULT 0,
	`cache_write_tokens` bigint NOT NULL DEFAULT 0,
	`reasoning_tokens` bigint NOT NULL DEFAULT 0,
	`billing_provider` longblob,
	`billing_base_url` longblob,
	`billing_mode` longblob,
	`estimated_cost_usd` double,
	`actual_cost_usd` double,
	`cost_status` longblob,
	`cost_source` longblob,
	`pricing_version` longblob,
	`title` varbinary(400),
	`api_call_count` bigint NOT NULL DEFAULT 0,
	`handoff_state` varbinary(255),
	`handoff_platform` longblob,
	`handoff_error` longtext CHARACTER SET utf8mb4 COLLATE utf8mb4_bin,
	`last_message_at` datetime(6),
	`chain_last_active` datetime(6),
	CONSTRAINT `sessions_id` PRIMARY KEY(`id`),
	CONSTRAINT `idx_sessions_title_unique` UNIQUE(`title`)
);
--> statement-breakpoint
CREATE TABLE `state_meta` (
	`key` varbinary(1024) NOT NULL,
	`value` longtext CHARACTER SET utf8mb4 COLLATE utf8mb4_bin,
	CONSTRAINT `state_meta_key` PRIMARY KEY(`key`)
);
--> statement-breakpoint
CREATE TABLE `telegram_dm_topic_bindings` (
	`chat_id` varbinary(1024) NOT NULL,
	`thread_id` varbinary(1024) NOT NULL,
	`user_id` varbinary(1024) NOT NULL,
	`session_key` longblob NOT NULL,
	`session_id` varbinary(3048) NOT NULL,
	`managed_mode` varbinary(255) NOT NULL DEFAULT 'auto',
	`linked_at` datetime(6) NOT NULL,
	`updated_at` datetime(6) NOT NULL,
	CONSTRAINT `telegram_dm_topic_bindings_chat_id_thread_id_pk` PRIMARY KEY(`chat_id`,`thread_id`),
	CONSTRAINT `idx_telegram_dm_topic_bindings_session` UNIQUE(`session_id`)
);
--> statement-breakpoint
CREATE TABLE `telegram_dm_topic_mode` (
	`chat_id` varbinary(1024) NOT NULL,
	`user_id` longblob NOT NULL,
	`enabled` boolean NOT NULL DEFAULT true,
	`activated_at` datetime(6) NOT NULL,
	`updated_at` datetime(6) NOT NULL,
	`has_topics_enabled` boolean,
	`allows_users_to_create_topics` boolean,
	`capability_checked_at` datetime(6),
	`intro_message_id` longblob,
	`pinned_message_id` longblob,
	CONSTRAINT `telegram_dm_topic_mode_chat_id` PRIMARY KEY(`chat_id`)
);
--> statement-breakpoint
ALTER TABLE `messages` ADD CONSTRAINT `messages_session_id_sessions_id_fk` FOREIGN KEY (`session_id`) REFERENCES `sessions`(`id`) ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE `sessions` ADD CONSTRAINT `sessions_parent_session_id_fk` FOREIGN KEY (`parent_session_id`) REFERENCES `sessions`(`id`) ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE `telegram_dm_topic_bindings` ADD CONSTRAINT `telegram_dm_topic_bindings_session_id_sessions_id_fk` FOREIGN KEY (`session_id`) REFERENCES `sessions`(`id`) ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX `idx_messages_session` ON `messages` (`session_id`,`timestamp`);--> statement-breakpoint
CREATE INDEX `idx_messages_timestamp` ON `messages` (`timestamp`);--> statement-breakpoint
CREATE INDEX `idx_sessions_source` ON `sessions` (`source`);--> statement-breakpoint
CREATE INDEX `idx_sessions_parent` ON `sessions` (`parent_session_id`);--> statement-breakpoint
CREATE INDEX `idx_sessions_started` ON `sessions` (`started_at` DESC);--> statement-breakpoint
CREATE INDEX `idx_sessions_handoff_pending` ON `sessions` (`handoff_state`,`started_at`);--> statement-breakpoint
CREATE INDEX `idx_sessions_chain_last_active` ON `sessions` (`chain_last_active` DESC,`started_at` DESC,`id` DESC);--> statement-breakpoint
CREATE INDEX `idx_telegram_dm_topic_bindings_user` ON `telegram_dm_topic_bindings` (`user_id`,`chat_id`);