CREATE TABLE "app_notes" (
	"id" serial PRIMARY KEY NOT NULL,
	"hermes_session_id" text NOT NULL,
	"body" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "sessions" (
	"id" text PRIMARY KEY NOT NULL,
	"user_name" text NOT NULL,
	"expires_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE INDEX "app_notes_hermes_session_idx" ON "app_notes" USING btree ("hermes_session_id");