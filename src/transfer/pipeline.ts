/**
 * The one pipeline behind import and copy: refuse a target holding different rows under the source's ids,
 * deal with NUL characters a Postgres target cannot store, then write sessions, parent links, messages (a
 * page at a time, ids kept), the id sequence, meta and Telegram topic rows. Every insert is ON CONFLICT
 * DO NOTHING, so an interrupted transfer is finished by running it again.
 */
import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import { SessionDbError } from '../errors.js';
import type { UnfitValue } from '../db/bulk-fit.js';
import type { RawRow } from '../repos/import.js';
import type { SessionStore } from '../store.js';
import { type RowSource, readMessagePage } from './sources.js';

export interface TransferProgress {
  phase: 'sessions' | 'messages' | 'done';
  /** Items of this phase written so far, and in all. */
  done: number;
  total: number;
  /** Seconds since the transfer started. */
  elapsedSeconds: number;
}

export interface TransferOptions {
  onProgress?: (p: TransferProgress) => void;
  /**
   * What to do when the store already holds *different* rows under ids the source also uses: 'refuse'
   * (default: an error naming them, nothing written) or 'keep-target' (the store's rows win and the
   * source's are skipped). Rows identical to the source's (a re-run) are never a conflict.
   */
  onConflict?: 'refuse' | 'keep-target';
  /**
   * NUL characters (U+0000) on their way into Postgres, whose text cannot hold them: 'keep' (default:
   * message fields, system prompts and JSON are stored exactly, escaped as db/pg/nul-escape.ts says; NUL in
   * an identifier or label, such as a session id or a source, refuses the transfer), 'replace' (each NUL
   * becomes U+FFFD, counted in the report) or 'refuse' (any NUL: an error naming the rows, nothing written).
   * SQLite targets keep NUL as it is whatever the option.
   */
  onNul?: 'keep' | 'refuse' | 'replace';
}

export interface TransferCounts {
  sessions: number;
  messages: number;
  meta: number;
  topicModes: number;
  topicBindings: number;
  /** Rows whose NUL characters were replaced with U+FFFD (onNul: 'replace', Postgres targets). */
  nulReplaced: number;
}

/**
 * A transfer refused before writing anything (conflicting ids, NUL Postgres cannot keep, values the target's
 * columns cannot hold).
 */
export class TransferRefusedError extends SessionDbError {
  /** Why, without the source's name (callers put it in front). */
  readonly reason: string;
  /** The values the target cannot hold, named by table, id and column (the first UNFIT_SHOWN of them); else empty. */
  readonly unfit: readonly UnfitValue[];
  constructor(what: string, reason: string, unfit: readonly UnfitValue[] = []) {
    super('VALIDATION', `${what}: ${reason}`);
    this.reason = reason;
    this.unfit = unfit;
  }
}

/** A value in a refusal: text quoted, numbers (NaN too) as JavaScript writes them. */
const shownValue = (v: unknown) => (typeof v === 'string' ? JSON.stringify(v) : String(v));

/** Values a refusal names one by one (it counts the rest). */
const UNFIT_SHOWN = 10;

const MESSAGE_PAGE = 5000;
const CHECK_CHUNK = 500;
const sameTime = (a: number, b: number) => Math.abs(a - b) <= 1e-6;

/** Ids the source and the store share with different data (at most `limit` of them). */
async function conflicts(source: RowSource, sessions: RawRow[], store: SessionStore, limit = 5): Promise<string[]> {
  const found: string[] = [];
  for (let i = 0; i < sessions.length && found.length < limit; i += CHECK_CHUNK) {
    const theirs = new Map(sessions.slice(i, i + CHECK_CHUNK).map((s) => [String(s.id), s]));
    for (const mine of await store.imports.existingSessions([...theirs.keys()])) {
      const t = theirs.get(mine.id)!;
      if (mine.source !== String(t.source) || !sameTime(mine.startedAt, Number(t.started_at)))
        found.push(`session ${mine.id}`);
    }
  }
  for (let last = -1; found.length < limit; ) {
    await yieldToEventLoop();
    const page = await readMessagePage(source, last, MESSAGE_PAGE);
    if (page.length === 0) break;
    last = Number(page[page.length - 1]!.id);
    for (let i = 0; i < page.length && found.length < limit; i += CHECK_CHUNK) {
      const theirs = new Map(page.slice(i, i + CHECK_CHUNK).map((m) => [Number(m.id), m]));
      for (const mine of await store.imports.existingMessages([...theirs.keys()])) {
        const t = theirs.get(mine.id)!;
        if (
          mine.sessionId !== String(t.session_id) ||
          mine.role !== String(t.role) ||
          !sameTime(mine.timestamp, Number(t.timestamp))
        ) {
          found.push(`message ${mine.id}`);
        }
      }
    }
  }
  return found.slice(0, limit);
}

const NUL = '\u0000';
const STRUCTURED = '\u0000json:';
const JSON_COLUMNS = new Set([
  'model_config',
  'tool_calls',
  'reasoning_details',
  'codex_reasoning_items',
  'codex_message_items',
]);
/** Columns Postgres stores with NUL escaped (free text and JSON; see BulkType 'free' in repos/import.ts). */
const KEEPS_NUL = new Set([
  ...JSON_COLUMNS,
  'content',
  'system_prompt',
  'tool_call_id',
  'tool_name',
  'finish_reason',
  'reasoning',
  'reasoning_content',
]);

/** JSON text of a column, or null when the column is not JSON (structured content counts as JSON). */
function jsonBody(key: string, value: string): string | null {
  if (key === 'content') {
    if (!value.startsWith(STRUCTURED)) return null;
    // Text that only looks structured (its JSON does not parse) is stored as plain text, marker and all.
    try {
      JSON.parse(value.slice(STRUCTURED.length));
      return value.slice(STRUCTURED.length);
    } catch {
      return null;
    }
  }
  return JSON_COLUMNS.has(key) ? value : null;
}

function walkStrings(value: unknown, fix: (s: string) => string): unknown {
  if (typeof value === 'string') return fix(value);
  if (Array.isArray(value)) return value.map((v) => walkStrings(v, fix));
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [fix(k), walkStrings(v, fix)]));
  }
  return value;
}

/** The parsed JSON when it spells NUL as the escape \u0000 (which jsonb refuses, like text refuses NUL). */
function jsonWithNul(body: string): unknown {
  if (!body.includes('\\u0000')) return undefined;
  try {
    const parsed: unknown = JSON.parse(body);
    let found = false;
    walkStrings(parsed, (s) => {
      if (s.includes(NUL)) found = true;
      return s;
    });
    return found ? parsed : undefined;
  } catch {
    return undefined; // not JSON: stored as a JSON string of the text, where "\u0000" is six harmless characters
  }
}

function hasNul(key: string, value: unknown): boolean {
  if (typeof value !== 'string') return false;
  const body = jsonBody(key, value);
  return body === null ? value.includes(NUL) : body.includes(NUL) || jsonWithNul(body) !== undefined;
}

function replaceNul(key: string, value: string): string {
  const body = jsonBody(key, value);
  if (body === null) return value.replaceAll(NUL, '\uFFFD');
  const prefix = value.slice(0, value.length - body.length);
  const parsed = jsonWithNul(body);
  const fixed = parsed === undefined ? body : JSON.stringify(walkStrings(parsed, (s) => s.replaceAll(NUL, '\uFFFD')));
  return prefix + fixed.replaceAll(NUL, '\uFFFD');
}

/**
 * Rows holding NUL in a string column: fixed in place ('replace'), or named ('refuse'; 'keep' names only
 * the columns Postgres cannot keep NUL in).
 */
function treatNul(rows: RawRow[], what: string, mode: 'keep' | 'refuse' | 'replace', found: string[]): number {
  let changed = 0;
  for (const row of rows) {
    let touched = false;
    for (const [key, value] of Object.entries(row)) {
      if (mode === 'keep' && KEEPS_NUL.has(key)) continue;
      if (!hasNul(key, value)) continue;
      if (mode !== 'replace') {
        found.push(`${what} ${String(row.id)} (${key})`);
      } else {
        row[key] = replaceNul(key, value as string);
        touched = true;
      }
    }
    if (touched) changed += 1;
  }
  return changed;
}

export async function transferRows(
  source: RowSource,
  store: SessionStore,
  options: TransferOptions = {},
): Promise<TransferCounts> {
  const started = performance.now();
  const elapsed = () => (performance.now() - started) / 1000;
  const progress = (phase: TransferProgress['phase'], done: number, total: number) =>
    options.onProgress?.({ phase, done, total, elapsedSeconds: elapsed() });
  // First of all: from here on, an append to the store (another chat, another process) takes an id above the
  // source's, never one an import page is about to write (that page would skip it as already present).
  const maxId = source.maxMessageId ? await source.maxMessageId() : null;
  if (maxId !== null) await store.imports.reserveIds(maxId);
  const sessions = await source.sessions();
  const totalMessages = await source.messageCount();
  const meta = await source.meta();
  const modes = await source.topicModes();
  const bindings = await source.topicBindings();

  // One pass over the source before the first write: NUL Postgres cannot keep, and every value the store's
  // columns cannot hold (a millisecond timestamp, text that is no number, a key too long, a row past MySQL's
  // max_allowed_packet). Either would otherwise fail a page after the sessions went in.
  const limits = await store.imports.limits();
  const nulMode = limits.nulOnlyInMessageText ? (options.onNul ?? 'keep') : null;
  const checkNul = nulMode === 'refuse' || nulMode === 'keep';
  const nulFound: string[] = [];
  const unfit: UnfitValue[] = [];
  let unfitCount = 0;
  if (checkNul) {
    treatNul(sessions, 'session', nulMode, nulFound);
    for (const [rows, what] of [
      [meta, 'state_meta row'],
      [modes, 'topic mode of chat'],
      [bindings, 'topic binding of chat'],
    ] as const) {
      treatNul(
        rows.map((r) => ({ ...r, id: r.key ?? r.chat_id })),
        what,
        nulMode,
        nulFound,
      );
    }
  }
  for (const [table, rows] of [
    ['sessions', sessions],
    ['state_meta', meta],
    ['telegram_dm_topic_mode', modes],
    ['telegram_dm_topic_bindings', bindings],
  ] as const) {
    unfitCount += store.imports.unfit(table, rows, limits, unfit, UNFIT_SHOWN);
  }
  for (let last = -1; ; ) {
    await yieldToEventLoop();
    const page = await readMessagePage(source, last, MESSAGE_PAGE);
    if (page.length === 0) break;
    last = Number(page[page.length - 1]!.id);
    if (checkNul && nulFound.length < 5) treatNul(page, 'message', nulMode, nulFound);
    unfitCount += store.imports.unfit('messages', page, limits, unfit, UNFIT_SHOWN);
  }
  if (nulFound.length > 0) {
    const where =
      nulMode === 'keep'
        ? 'an identifier or label (Postgres keeps NUL only in message text, system prompts and JSON)'
        : 'the data (onNul: "refuse")';
    throw new TransferRefusedError(
      `Cannot copy ${source.label} into ${store.url}`,
      `the NUL character (U+0000) is in ${where}: ${nulFound.slice(0, 5).join(', ')}; nothing was written to ` +
        `${store.url}. Pass onNul: "replace" (CLI: --nul replace) to store each NUL as U+FFFD, or copy into SQLite, which keeps it.`,
    );
  }
  if (unfitCount > 0) {
    const named = unfit.map((u) => `${u.table} ${u.id} ${u.column} = ${shownValue(u.value)} (${u.reason})`);
    const more = unfitCount > unfit.length ? `, and ${unfitCount - unfit.length} more` : '';
    throw new TransferRefusedError(
      `Cannot copy ${source.label} into ${store.url}`,
      `${unfitCount} value${unfitCount === 1 ? '' : 's'} of the source cannot be stored in ${store.url}: ` +
        `${named.join('; ')}${more}; nothing was written. Correct ${unfitCount === 1 ? 'it' : 'them'} in the source, or write to a store that can hold ${unfitCount === 1 ? 'it' : 'them'}.`,
      unfit,
    );
  }

  const storeIsEmpty = (await store.sessionCount()) === 0 && (await store.messageCount()) === 0;
  if (!storeIsEmpty && (options.onConflict ?? 'refuse') === 'refuse') {
    const clashes = await conflicts(source, sessions, store);
    if (clashes.length > 0) {
      throw new TransferRefusedError(
        `Cannot copy ${source.label} into ${store.url}`,
        `${store.url} already holds different data under ids the source uses (${clashes.join(', ')}…); ` +
          'nothing was written. Use an empty store, or pass onConflict: "keep-target" (CLI: --merge keep-target) to keep the store\'s rows.',
      );
    }
  }

  let nulReplaced = nulMode === 'replace' ? treatNul(sessions, 'session', 'replace', []) : 0;
  progress('sessions', 0, sessions.length);
  await store.imports.insertSessions(sessions);
  await store.imports.linkParents(
    sessions
      .filter((s) => s.parent_session_id !== null && s.parent_session_id !== undefined)
      .map((s) => [String(s.id), String(s.parent_session_id)]),
  );
  progress('sessions', sessions.length, sessions.length);

  let done = 0;
  let firstId: number | null = null;
  let last = -1;
  for (;;) {
    await yieldToEventLoop();
    const page = await readMessagePage(source, last, MESSAGE_PAGE);
    if (page.length === 0) break;
    if (nulMode === 'replace') nulReplaced += treatNul(page, 'message', 'replace', []);
    await store.imports.insertMessages(page);
    firstId ??= Number(page[0]!.id);
    last = Number(page[page.length - 1]!.id);
    done += page.length;
    progress('messages', done, totalMessages);
  }
  // The derived structures held off while the pages were written, for the source's whole id range (rows an
  // interrupted earlier run wrote included).
  if (firstId !== null) await store.imports.buildDeferred(firstId, last);
  await store.imports.indexForSearch();
  await store.imports.advanceIds();
  if (nulMode === 'replace')
    for (const rows of [meta, modes, bindings]) nulReplaced += treatNul(rows, 'row', 'replace', []);
  await store.imports.insertMeta(meta);
  await store.imports.insertTopics(modes, bindings);
  // Autovacuum may be off, or not awake yet: the first listing after an import must not plan without statistics.
  await store.imports.analyze();
  progress('done', done, totalMessages);
  return {
    sessions: sessions.length,
    messages: done,
    meta: meta.length,
    topicModes: modes.length,
    topicBindings: bindings.length,
    nulReplaced,
  };
}
