/**
 * zod schemas for every public input, and `validate()`, which turns a zod failure into a ValidationError
 * naming the field. Validation runs before any database work, so bad input writes nothing.
 *
 * Text rules shared by every backend. Identifiers (ids, sources, roles, keys, titles) must be well-formed
 * Unicode and free of NUL. Free text (message fields, system prompts) and every string in a JSON payload
 * are never refused: NUL is stored as it is (escaped on Postgres, see db/pg/nul-escape.ts), and a lone
 * surrogate, which UTF-8 cannot carry, becomes U+FFFD.
 */
import { z } from 'zod';
import type { JsonInput } from './codecs/json.js';
import type { MessageContentInput } from './codecs/content.js';
import { pyStrip } from './codecs/python-text.js';
import { ValidationError } from './errors.js';

const MAX_JSON_DEPTH = 200;

function textProblem(value: string): string | undefined {
  if (value.includes('\u0000')) return 'must not contain NUL (\\u0000)';
  if (!value.isWellFormed()) return 'must be well-formed Unicode (it has a lone surrogate)';
  return undefined;
}

const wellFormed = (s: string) => (s.isWellFormed() ? s : s.toWellFormed());

/**
 * The first problem in a JSON payload, with its path, or undefined when it is JSON. Strings may hold
 * anything (see wellFormedJson for lone surrogates).
 */
export function jsonProblem(value: unknown, path = '', depth = 0): string | undefined {
  if (depth > MAX_JSON_DEPTH) return `${path || 'value'} is nested more than ${MAX_JSON_DEPTH} levels deep`;
  if (value === null || typeof value === 'boolean') return undefined;
  if (typeof value === 'number')
    return Number.isFinite(value) ? undefined : `${path || 'value'} is not a finite number`;
  if (typeof value === 'string') return undefined;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const p = jsonProblem(value[i], `${path}[${i}]`, depth + 1);
      if (p) return p;
    }
    return undefined;
  }
  if (typeof value === 'object') {
    const proto = Object.getPrototypeOf(value);
    if (proto !== Object.prototype && proto !== null) return `${path || 'value'} is not a plain object`;
    for (const [k, v] of Object.entries(value)) {
      if (v === undefined) continue;
      const p = jsonProblem(v, path ? `${path}.${k}` : k, depth + 1);
      if (p) return p;
    }
    return undefined;
  }
  return `${path || 'value'} is a ${typeof value}, not JSON`;
}

/** A JSON value with lone surrogates in its strings and keys as U+FFFD: the value itself when it has none. */
function wellFormedJson<T>(value: T): T {
  const clean = (v: unknown): boolean =>
    typeof v === 'string'
      ? v.isWellFormed()
      : Array.isArray(v)
        ? v.every(clean)
        : v !== null && typeof v === 'object'
          ? Object.entries(v).every(([k, x]) => k.isWellFormed() && clean(x))
          : true;
  if (clean(value)) return value;
  const copy = (v: unknown): unknown =>
    typeof v === 'string'
      ? wellFormed(v)
      : Array.isArray(v)
        ? v.map(copy)
        : v !== null && typeof v === 'object'
          ? Object.fromEntries(Object.entries(v).map(([k, x]) => [wellFormed(k), copy(x)]))
          : v;
  return copy(value) as T;
}

export const text = z.string().superRefine((value, ctx) => {
  const problem = textProblem(value);
  if (problem) ctx.addIssue({ code: 'custom', message: problem });
});
export const optionalText = text.nullish();
/** Free text: any string is stored; lone surrogates become U+FFFD. */
export const freeText = z.string().transform(wellFormed);
export const optionalFreeText = freeText.nullish();
/** A title as given: any string, for Hermes' sanitising (which drops NUL and other controls) to clean first. */
export const titleInput = z.string().nullish();
/** Session ids and other keys: non-empty, at most 1024 characters. */
export const id = text.pipe(z.string().min(1, 'must not be empty').max(1024, 'must be at most 1024 characters'));
export const optionalId = id.nullish();
/** What a caller may pass for an id it looks up: a string (maybe empty: then nothing is found). */
export const lookupId = text.pipe(z.string().max(1024, 'must be at most 1024 characters'));
export const json = z
  .custom<JsonInput>((value) => jsonProblem(value) === undefined, {
    error: (issue) => jsonProblem(issue.input) ?? 'must be JSON',
  })
  .transform(wellFormedJson);
export const optionalJson = json.nullish();
export const content = z
  .custom<MessageContentInput>((value) => typeof value === 'string' || (typeof value === 'object' && value !== null), {
    error: 'must be a string, a list of parts, an object, or null',
  })
  .superRefine((value, ctx) => {
    const problem = typeof value === 'string' ? undefined : jsonProblem(value);
    if (problem) ctx.addIssue({ code: 'custom', message: problem });
  })
  .transform((value) => (typeof value === 'string' ? wellFormed(value) : wellFormedJson(value)))
  .nullish();
const int = z.number().int().min(-Number.MAX_SAFE_INTEGER).max(Number.MAX_SAFE_INTEGER);
/**
 * Session counters (tokens, API calls): bigint on Postgres, 64-bit on SQLite; exact as JavaScript numbers up
 * to Number.MAX_SAFE_INTEGER, so that is the bound on every backend.
 */
const counterValue = int;
/** One message's token count: a 32-bit integer on every backend (Postgres' column is integer). */
const INT32_MAX = 2_147_483_647;
const messageTokenCount = z
  .number()
  .int()
  .min(-INT32_MAX - 1, `must be at least ${-INT32_MAX - 1} (a 32-bit integer)`)
  .max(INT32_MAX, `must be at most ${INT32_MAX} (a 32-bit integer)`);
const count = z.number().int().min(0).max(Number.MAX_SAFE_INTEGER);
const finite = z.number().refine(Number.isFinite, 'must be a finite number');
/** Python's LIMIT: a negative number means no limit. */
const limit = int;

// ── Closed and open sets of names (the public literal types are derived from these, in types.ts) ──

/** searchMessages' `sort`. Hermes orders by relevance for any other value, which hid typos: here they are refused. */
export const searchSort = z.enum(['relevance', 'newest', 'oldest'], {
  error: "must be 'relevance', 'newest' or 'oldest'",
});
/** Hermes compares `sort.strip().lower()`: case and surrounding whitespace are ignored here too. */
const searchSortInput = z.preprocess<unknown, typeof searchSort, z.output<typeof searchSort>>(
  (value) => (typeof value === 'string' ? pyStrip(value).toLowerCase() : value),
  searchSort,
);
/** The handoff state machine: NULL -> pending -> running -> completed | failed. Only the store writes these. */
export const handoffStatus = z.enum(['pending', 'running', 'completed', 'failed']);
/** The roles Hermes writes. Hermes stores any role string, so the API accepts any (see HermesRole). */
export const knownRole = z.enum(['system', 'user', 'assistant', 'tool']);
/** The managed modes Hermes' gateway writes ('auto' by default). Hermes stores any string, so the API accepts any. */
export const knownManagedMode = z.enum(['auto', 'restored']);

/** A string union open to any other string: `K | (string & {})` keeps editor completion for K without refusing others. */
export type OpenUnion<K extends string> = K | (string & {});
/** `schema`'s check, typed as taking and giving an open union (any string passes the type, as it passes Hermes). */
const openUnion = <K extends string>(schema: z.ZodType<string, string>) =>
  schema as unknown as z.ZodType<OpenUnion<K>, OpenUnion<K>>;

/** A message role: non-empty, at most 1024 characters, well-formed, no NUL. */
export const role = openUnion<z.output<typeof knownRole>>(id);
export const managedMode = openUnion<z.output<typeof knownManagedMode>>(id);

export const createSessionOptions = z
  .object({
    userId: optionalText,
    model: optionalText,
    modelConfig: optionalJson,
    systemPrompt: optionalFreeText,
    parentSessionId: optionalId,
  })
  .strict();

export const updateTokenCountsOptions = z
  .object({
    inputTokens: counterValue.default(0),
    outputTokens: counterValue.default(0),
    model: optionalText,
    cacheReadTokens: counterValue.default(0),
    cacheWriteTokens: counterValue.default(0),
    reasoningTokens: counterValue.default(0),
    estimatedCostUsd: finite.nullish(),
    actualCostUsd: finite.nullish(),
    costStatus: optionalText,
    costSource: optionalText,
    pricingVersion: optionalText,
    billingProvider: optionalText,
    billingBaseUrl: optionalText,
    billingMode: optionalText,
    apiCallCount: counterValue.default(0),
    absolute: z.boolean().default(false),
  })
  .strict();

export const pruneOptions = z
  .object({ olderThanDays: finite.pipe(z.number().min(0)).default(90), source: optionalText })
  .strict();

export const autoMaintenanceOptions = z
  .object({
    retentionDays: finite.pipe(z.number().min(0)).default(90),
    minIntervalHours: finite.pipe(z.number().min(0)).default(24),
    vacuum: z.boolean().default(true),
  })
  .strict();

export const appendMessageOptions = z
  .object({
    toolName: optionalFreeText,
    toolCalls: optionalJson,
    toolCallId: optionalFreeText,
    tokenCount: messageTokenCount.nullish(),
    finishReason: optionalFreeText,
    reasoning: optionalFreeText,
    reasoningContent: optionalFreeText,
    reasoningDetails: optionalJson,
    codexReasoningItems: optionalJson,
    codexMessageItems: optionalJson,
  })
  .strict();

/**
 * One message for replaceMessages. Accepts the camelCase row keys and the snake_case OpenAI keys that
 * getMessagesAsConversation returns, so a conversation can be edited and written back. Other keys
 * (timestamps, ids) are ignored, as Hermes ignores them.
 */
const SNAKE_TO_CAMEL = {
  tool_call_id: 'toolCallId',
  tool_calls: 'toolCalls',
  tool_name: 'toolName',
  token_count: 'tokenCount',
  finish_reason: 'finishReason',
  reasoning_content: 'reasoningContent',
  reasoning_details: 'reasoningDetails',
  codex_reasoning_items: 'codexReasoningItems',
  codex_message_items: 'codexMessageItems',
} as const;

export const replacementMessage = z
  .record(z.string(), z.unknown())
  .transform((raw, ctx) => {
    const out: Record<string, unknown> = { ...raw };
    for (const [snake, camel] of Object.entries(SNAKE_TO_CAMEL)) {
      if (!(snake in raw)) continue;
      if (camel in raw && raw[camel] !== raw[snake]) {
        ctx.addIssue({ code: 'custom', message: `both ${snake} and ${camel} are given and differ` });
      }
      out[camel] = raw[snake];
    }
    return out;
  })
  // The same fields as appendMessage's options, plus role and content; other keys are ignored.
  .pipe(
    z.object({ role: openUnion<z.output<typeof knownRole>>(text).optional(), content, ...appendMessageOptions.shape }),
  );
export const replacementMessages = z.array(replacementMessage);
/** appendMessages: each message names its role and takes appendMessage's options (camelCase). */
export const appendMessagesInput = z.array(z.object({ role, content, ...appendMessageOptions.shape }).strict());

export const conversationOptions = z.object({ includeAncestors: z.boolean().default(false) }).strict();
export const aroundOptions = z.object({ window: int.default(5) }).strict();
export const anchoredViewOptions = z
  .object({
    window: int.default(5),
    bookend: int.default(3),
    keepRoles: z.array(openUnion<z.output<typeof knownRole>>(text)).nullable().default(['user', 'assistant']),
  })
  .strict();

export const listSessionsRichOptions = z
  .object({
    source: optionalText,
    excludeSources: z.array(text).nullish(),
    limit: limit.default(20),
    offset: count.default(0),
    includeChildren: z.boolean().default(false),
    projectCompressionTips: z.boolean().default(true),
    orderByLastActive: z.boolean().default(false),
  })
  .strict();

export const sourceFilterOptions = z.object({ source: optionalText }).strict();
export const exportStreamOptions = z.object({ sessionId: lookupId.optional(), source: optionalText }).strict();
export const sessionFilterOptions = z.object({ sessionId: optionalText }).strict();

/** Telegram ids arrive as numbers from the Bot API; Hermes stores them as strings. */
export const telegramId = z.union([
  id,
  z
    .number()
    .int()
    .transform((n) => String(n)),
]);

export const enableTopicModeOptions = z
  .object({
    chatId: telegramId,
    userId: telegramId,
    hasTopicsEnabled: z.boolean().nullish(),
    allowsUsersToCreateTopics: z.boolean().nullish(),
  })
  .strict();
export const disableTopicModeOptions = z
  .object({ chatId: telegramId, clearBindings: z.boolean().default(true) })
  .strict();
export const topicModeQuery = z.object({ chatId: telegramId, userId: telegramId }).strict();
export const topicBindingQuery = z.object({ chatId: telegramId, threadId: telegramId }).strict();
export const bindTopicOptions = z
  .object({
    chatId: telegramId,
    threadId: telegramId,
    userId: telegramId,
    sessionKey: id,
    sessionId: id,
    managedMode: managedMode.default('auto'),
  })
  .strict();
export const linkedQuery = z.object({ sessionId: lookupId }).strict();
export const unlinkedQuery = z
  .object({ chatId: telegramId.nullish(), userId: telegramId, limit: limit.default(10) })
  .strict();

export const metaKey = id;

/** Parse `value` with `schema`; on failure throw a ValidationError naming `field` (and the inner path). */
export function validate<S extends z.ZodType>(schema: S, value: unknown, field: string): z.output<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const where = issue && issue.path.length > 0 ? `${field}.${issue.path.join('.')}` : field;
  throw new ValidationError(where, issue?.message ?? 'invalid', { cause: result.error });
}

/**
 * An anchor message id: any integer. One that names no message (negative, 0, past the last, beyond what an
 * id can be) gives the empty view, as in Hermes; only a non-integer is refused.
 */
export const messageId = z.number().refine(Number.isInteger, 'must be an integer');

/** A search query: any string (NUL and lone surrogates are neutralised by the search, not refused). */
export const searchQuery = z.string();
export const searchMessagesOptions = z
  .object({
    sourceFilter: z.array(text).nullish(),
    excludeSources: z.array(text).nullish(),
    roleFilter: z.array(openUnion<z.output<typeof knownRole>>(text)).nullish(),
    limit: int.default(20),
    offset: count.default(0),
    sort: searchSortInput.nullish(),
  })
  .strict();
export const searchSessionsOptions = z
  .object({ source: optionalText, limit: int.default(20), offset: count.default(0) })
  .strict();
