/**
 * Comparing a source (a Hermes file or a store) with the store it was transferred into: the same sessions
 * with the same fields, the same number of messages in each and the same content (a digest per session
 * over normalised values, so SQLite and Postgres compare equal), the same meta and Telegram topic rows,
 * and search spot-checks (phrases taken from source messages must find those messages in the target).
 * Messages are streamed a page at a time on both sides; only per-session digests are held.
 */
import crypto from 'node:crypto';
// SQLite reads resolve without leaving the microtask queue: timers and I/O get their turn between pages.
import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import { decodeStoredContent } from '../codecs/content.js';
import { parseStoredJson } from '../codecs/json.js';
import { roundToMicros } from '../codecs/time.js';
import { type RawRow, rawCount, rawNumber, rawText } from '../repos/import.js';
import type { SessionStore } from '../store.js';
import type { MessageRow } from '../types.js';
import { type RowSource, readMessagePage, storeSource } from './sources.js';

export interface VerifyReport {
  ok: boolean;
  sessions: { from: number; to: number };
  messages: { from: number; to: number };
  /** Human-readable differences (the first few). */
  problems: string[];
  /** Phrases searched for in the target, with whether the message they came from was found. */
  spotChecks: Array<{ query: string; same: boolean }>;
  /** Why no phrase was searched for: the target cannot search messages (a MySQL store, for now). */
  spotChecksSkipped?: string;
}

export interface VerifyOptions {
  /** The transfer replaced NUL with U+FFFD (onNul: 'replace'): compare the source the same way. */
  nulReplaced?: boolean;
}

const MAX_PROBLEMS = 20;
/** Messages per page: one page is read and hashed in one synchronous stretch (~30 ms on SQLite). */
const PAGE = 2000;
/** Messages digested (or sessions compared) between two turns of the event loop. */
const DIGEST_SLICE = 250;
const SPOT_CHECKS = 5;

/** JSON with object keys sorted: Postgres' jsonb reorders keys, so digests must not depend on key order. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    return `{${Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** A digest of a session's messages over the values every backend returns (times to the microsecond). */
export function messagesDigest(messages: MessageRow[]): string {
  const hash = crypto.createHash('sha256');
  for (const m of messages) {
    hash.update(
      canonical([
        m.id,
        m.role,
        m.content,
        m.toolCallId,
        m.toolCalls,
        m.toolName,
        roundToMicros(m.timestamp),
        m.tokenCount,
        m.finishReason,
        m.reasoning,
        m.reasoningContent,
        m.reasoningDetails,
        m.codexReasoningItems,
        m.codexMessageItems,
      ]),
    );
    hash.update('\n');
  }
  return hash.digest('hex');
}

// Normalisation reads values as ImportRepo writes them: missing columns (older layouts) read as its defaults.
const str = rawText;
const num = rawNumber;
const count = rawCount;
const time = (v: unknown) => (num(v) === null ? null : roundToMicros(num(v)!));
const json = (v: unknown) => parseStoredJson(str(v));
const bool = (v: unknown) => (v === null || v === undefined ? null : Boolean(Number(v)));

const SESSION_FIELDS: Array<[string, (v: unknown) => unknown]> = [
  ['source', (v) => str(v) ?? 'unknown'],
  ['user_id', str],
  ['model', str],
  ['model_config', json],
  ['system_prompt', str],
  ['started_at', (v) => time(v) ?? 0],
  ['ended_at', time],
  ['end_reason', str],
  ['message_count', count],
  ['tool_call_count', count],
  ['input_tokens', count],
  ['output_tokens', count],
  ['cache_read_tokens', count],
  ['cache_write_tokens', count],
  ['reasoning_tokens', count],
  ['billing_provider', str],
  ['billing_base_url', str],
  ['billing_mode', str],
  ['estimated_cost_usd', num],
  ['actual_cost_usd', num],
  ['cost_status', str],
  ['cost_source', str],
  ['pricing_version', str],
  ['title', str],
  ['api_call_count', count],
  ['handoff_state', str],
  ['handoff_platform', str],
  ['handoff_error', str],
];

function normaliseMessage(r: RawRow): unknown[] {
  return [
    num(r.id),
    str(r.session_id),
    str(r.role) ?? 'unknown',
    decodeStoredContent(str(r.content)),
    str(r.tool_call_id),
    json(r.tool_calls),
    str(r.tool_name),
    time(r.timestamp) ?? 0,
    num(r.token_count),
    str(r.finish_reason),
    str(r.reasoning),
    str(r.reasoning_content),
    json(r.reasoning_details),
    json(r.codex_reasoning_items),
    json(r.codex_message_items),
  ];
}

const normaliseMode = (r: RawRow) => [
  str(r.chat_id),
  str(r.user_id),
  bool(r.enabled) ?? true,
  time(r.activated_at) ?? 0,
  time(r.updated_at) ?? 0,
  bool(r.has_topics_enabled),
  bool(r.allows_users_to_create_topics),
  time(r.capability_checked_at),
  str(r.intro_message_id),
  str(r.pinned_message_id),
];
const normaliseBinding = (r: RawRow) => [
  str(r.chat_id),
  str(r.thread_id),
  str(r.user_id),
  str(r.session_key),
  str(r.session_id),
  str(r.managed_mode) ?? 'auto',
  time(r.linked_at) ?? 0,
  time(r.updated_at) ?? 0,
];

/** The value with every NUL in its strings (and keys) as U+FFFD, as onNul: 'replace' stores it. */
function withoutNul(value: unknown): unknown {
  if (typeof value === 'string') return value.replaceAll('\u0000', '\uFFFD');
  if (Array.isArray(value)) return value.map(withoutNul);
  if (value !== null && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [withoutNul(k), withoutNul(v)]));
  return value;
}

interface SessionDigest {
  count: number;
  hash: crypto.Hash;
}

/** Stream every message of a source into per-session digests; `onMessage` sees each raw row. */
async function digestMessages(
  source: RowSource,
  nulReplaced: boolean,
  onMessage?: (r: RawRow) => void,
): Promise<{ total: number; bySession: Map<string, string>; counts: Map<string, number> }> {
  const sessions = new Map<string, SessionDigest>();
  let total = 0;
  for (let last = -1; ; ) {
    await yieldToEventLoop();
    const page = await readMessagePage(source, last, PAGE);
    if (page.length === 0) break;
    last = Number(page[page.length - 1]!.id);
    for (const [i, r] of page.entries()) {
      // Hashing a whole page at once held the event loop for 60-130 ms on this machine.
      if (i > 0 && i % DIGEST_SLICE === 0) await yieldToEventLoop();
      onMessage?.(r);
      total += 1;
      const id = String(r.session_id);
      let s = sessions.get(id);
      if (!s) {
        s = { count: 0, hash: crypto.createHash('sha256') };
        sessions.set(id, s);
      }
      s.count += 1;
      const values = normaliseMessage(r);
      s.hash.update(canonical(nulReplaced ? withoutNul(values) : values)).update('\n');
    }
  }
  const bySession = new Map<string, string>();
  const counts = new Map<string, number>();
  for (const [id, s] of sessions) {
    bySession.set(id, s.hash.digest('hex'));
    counts.set(id, s.count);
  }
  return { total, bySession, counts };
}

/** A phrase of three or four plain words from a message, which a search for it must find. */
const PHRASE = /(?<![\p{L}\p{N}_])[A-Za-z]{3,}(?: [A-Za-z]{3,}){2,3}(?![\p{L}\p{N}_])/u;

export async function verifyTransfer(
  source: RowSource,
  target: SessionStore,
  options: VerifyOptions = {},
): Promise<VerifyReport> {
  const problems: string[] = [];
  const note = (p: string) => {
    if (problems.length < MAX_PROBLEMS) problems.push(p);
  };
  const nul = options.nulReplaced ?? false;
  const to = storeSource(target);
  const fix = (v: unknown) => (nul ? withoutNul(v) : v);

  // Sessions, field by field (a parent the source does not hold cannot be linked, so it reads as none).
  const fromSessions = await source.sessions();
  const toSessions = new Map((await to.sessions()).map((s) => [String(s.id), s]));
  const ids = new Set(fromSessions.map((s) => String(s.id)));
  for (const [i, s] of fromSessions.entries()) {
    if (i > 0 && i % DIGEST_SLICE === 0) await yieldToEventLoop();
    const id = String(s.id);
    const t = toSessions.get(id);
    if (!t) {
      note(`session ${id} is missing`);
      continue;
    }
    const differ = SESSION_FIELDS.filter(([k, f]) => canonical(fix(f(s[k]))) !== canonical(f(t[k]))).map(([k]) => k);
    const parent = str(s.parent_session_id);
    if ((parent !== null && ids.has(parent) ? parent : null) !== str(t.parent_session_id))
      differ.push('parent_session_id');
    if (differ.length > 0) note(`session ${id}: ${differ.join(', ')} differ`);
  }
  for (const id of toSessions.keys()) if (!ids.has(id)) note(`session ${id} is only in the target`);

  // Messages: per-session counts and digests; a few phrases for search spot-checks.
  const total = await source.messageCount();
  const step = Math.max(1, Math.floor(total / (SPOT_CHECKS * 4)));
  const candidates: Array<{ query: string; id: number }> = [];
  let seen = 0;
  const a = await digestMessages(source, nul, (r) => {
    if (
      seen++ % step !== 0 ||
      candidates.length >= SPOT_CHECKS ||
      typeof r.content !== 'string' ||
      r.content.startsWith('\u0000')
    )
      return;
    // From the head of the message: every backend indexes it (Postgres bounds the word vector of huge messages).
    const phrase = PHRASE.exec(r.content.slice(0, 2000))?.[0];
    if (phrase) candidates.push({ query: `"${phrase}"`, id: Number(r.id) });
  });
  const b = await digestMessages(to, false);
  for (const [id, n] of a.counts) {
    const m = b.counts.get(id) ?? 0;
    if (m !== n) note(`session ${id}: ${n} messages, ${m} in the target`);
    else if (a.bySession.get(id) !== b.bySession.get(id)) note(`session ${id}: message content differs`);
  }
  for (const [id, m] of b.counts) if (!a.counts.has(id)) note(`session ${id}: 0 messages, ${m} in the target`);

  // Meta and Telegram topic rows, as sets.
  const rowsDiffer = async (what: string, from: RawRow[], into: RawRow[], norm: (r: RawRow) => unknown[]) => {
    const x = from.map((r) => canonical(fix(norm(r)))).sort();
    const y = into.map((r) => canonical(norm(r))).sort();
    if (x.length !== y.length || x.some((v, i) => v !== y[i]))
      note(`${what} differ (${x.length} in the source, ${y.length} in the target)`);
  };
  await rowsDiffer('state_meta rows', await source.meta(), await to.meta(), (r) => [str(r.key), str(r.value)]);
  await rowsDiffer('telegram topic modes', await source.topicModes(), await to.topicModes(), normaliseMode);
  await rowsDiffer('telegram topic bindings', await source.topicBindings(), await to.topicBindings(), normaliseBinding);

  const spotChecks: VerifyReport['spotChecks'] = [];
  const spotChecksSkipped = target.search.unavailable;
  for (const { query, id } of spotChecksSkipped === undefined ? candidates : []) {
    // Asked of the message itself, so a phrase that matches thousands of newer messages is still checked.
    const same = await target.search.matchesMessage(query, id);
    spotChecks.push({ query, same });
    if (!same) note(`search ${query} does not find message ${id} in the target`);
  }
  return {
    ok: problems.length === 0,
    sessions: { from: fromSessions.length, to: toSessions.size },
    messages: { from: a.total, to: b.total },
    problems,
    spotChecks,
    ...(spotChecksSkipped === undefined ? {} : { spotChecksSkipped }),
  };
}

/** Compare two stores (the `from` store is only read). */
export function verifyStores(from: SessionStore, to: SessionStore, options: VerifyOptions = {}): Promise<VerifyReport> {
  return verifyTransfer(storeSource(from), to, options);
}
