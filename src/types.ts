/**
 * The values the public API returns: camelCase keys, times as Unix epoch seconds, JSON parsed. The same
 * on every backend.
 */
import type { MessageContent, MessageContentInput } from './codecs/content.js';
import type { JsonInput, JsonValue } from './codecs/json.js';
import type { z } from 'zod';
import type { OpenUnion, handoffStatus, knownManagedMode, knownRole, searchSort } from './validation.js';

export type { JsonInput, JsonValue, MessageContent, MessageContentInput, OpenUnion };

/** searchMessages' order: 'relevance' (the default), 'newest' or 'oldest'. Anything else is a ValidationError. */
export type SearchSort = z.output<typeof searchSort>;
/** A handoff's state (`HandoffState.state`, `SessionRow.handoffState`): Hermes' closed state machine. */
export type HandoffStatus = z.output<typeof handoffStatus>;
/** The roles Hermes writes. */
export type KnownRole = z.output<typeof knownRole>;
/**
 * A message role. Hermes stores any role string (`replaceMessages` writes 'unknown' for a message without
 * one), so any string is accepted; the known ones are offered by editors.
 */
export type HermesRole = OpenUnion<KnownRole>;
/** A Telegram binding's managed mode: 'auto' (the default) or 'restored' as Hermes writes them, or any other string. */
export type TelegramManagedMode = OpenUnion<z.output<typeof knownManagedMode>>;

export interface SessionRow {
  id: string;
  source: string;
  userId: string | null;
  model: string | null;
  /** Parsed JSON (Hermes hands back the raw JSON text). */
  modelConfig: JsonValue | null;
  systemPrompt: string | null;
  parentSessionId: string | null;
  startedAt: number;
  endedAt: number | null;
  endReason: string | null;
  messageCount: number;
  toolCallCount: number;
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
  reasoningTokens: number;
  billingProvider: string | null;
  billingBaseUrl: string | null;
  billingMode: string | null;
  estimatedCostUsd: number | null;
  actualCostUsd: number | null;
  costStatus: string | null;
  costSource: string | null;
  pricingVersion: string | null;
  title: string | null;
  apiCallCount: number;
  handoffState: HandoffStatus | null;
  handoffPlatform: string | null;
  handoffError: string | null;
}

export interface MessageRow {
  id: number;
  sessionId: string;
  role: HermesRole;
  /** A string, or structured (multimodal) content as a value. */
  content: MessageContent | null;
  toolCallId: string | null;
  /** Parsed JSON. */
  toolCalls: JsonValue | null;
  toolName: string | null;
  timestamp: number;
  tokenCount: number | null;
  finishReason: string | null;
  reasoning: string | null;
  reasoningContent: string | null;
  /** Parsed JSON (Hermes returns these three as raw JSON text from get_messages). */
  reasoningDetails: JsonValue | null;
  codexReasoningItems: JsonValue | null;
  codexMessageItems: JsonValue | null;
}

/** A session row as listings show it: plus the last activity and a preview of the first user message. */
export interface RichSessionRow extends SessionRow {
  /** The latest message timestamp, or `startedAt` when the session has none. */
  lastActive: number;
  /** The first user message, newlines flattened, cut to 60 characters plus "..." (Hermes' rule). */
  preview: string;
  /** Set when a compression chain was projected onto its tip: the id of the chain's root. */
  lineageRootId?: string;
}

/**
 * A message ready to replay into a model, in the OpenAI chat wire format Hermes produces. Its keys stay
 * snake_case (`tool_call_id`, `tool_calls`, …) because that is the format model SDKs accept.
 */
export interface ConversationMessage {
  role: HermesRole;
  content: MessageContent | null;
  tool_call_id?: string;
  tool_name?: string;
  tool_calls?: JsonValue;
  finish_reason?: string;
  reasoning?: string;
  reasoning_content?: string;
  reasoning_details?: JsonValue | null;
  codex_reasoning_items?: JsonValue | null;
  codex_message_items?: JsonValue | null;
}

export interface MessagesAround {
  /** The anchor and its neighbours in id order. */
  window: MessageRow[];
  /** How many rows came before the anchor (fewer than asked means the session starts there). */
  messagesBefore: number;
  messagesAfter: number;
}

export interface AnchoredView extends MessagesAround {
  /** The first messages of the session before the window (kept roles, non-empty content). */
  bookendStart: MessageRow[];
  /** The last messages of the session after the window. */
  bookendEnd: MessageRow[];
}

export interface HandoffState {
  state: HandoffStatus | null;
  platform: string | null;
  error: string | null;
}

export interface TelegramTopicBinding {
  chatId: string;
  threadId: string;
  userId: string;
  sessionKey: string;
  sessionId: string;
  managedMode: TelegramManagedMode;
  linkedAt: number;
  updatedAt: number;
}

export interface SessionExport extends SessionRow {
  messages: MessageRow[];
}

export interface SessionExportWithActivity extends SessionExport {
  lastActive: number;
}

export interface AutoMaintenanceResult {
  skipped: boolean;
  pruned: number;
  vacuumed: boolean;
  /** Set when the run failed; the failure is reported here instead of thrown (Hermes' contract). */
  error?: string;
}
