/**
 * Importing a Hermes state.db (any schema version with sessions and messages) into a store.
 *
 * The source is never written: it is copied (with its -wal and -shm) to a private snapshot, which is
 * what gets read. Columns are mapped by name from PRAGMA table_info; columns this library does not know
 * (later Hermes versions add many) are reported with how many rows hold a value, never dropped silently.
 * Ids, timestamps and counters are kept. Every insert is ON CONFLICT DO NOTHING, so an interrupted import
 * can simply be run again.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { SessionDbError } from '../errors.js';
import type { RawRow } from '../repos/import.js';
import type { SessionStore } from '../store.js';

export class ImportError extends SessionDbError {
  readonly file: string;
  constructor(file: string, reason: string, options?: { cause?: unknown }) {
    super('VALIDATION', `Cannot import ${file}: ${reason}`, options);
    this.file = file;
  }
}

/** Columns of each table that map onto our schema (everything else is reported). */
const KNOWN: Record<string, string[]> = {
  sessions: ['id', 'source', 'user_id', 'model', 'model_config', 'system_prompt', 'parent_session_id', 'started_at', 'ended_at',
    'end_reason', 'message_count', 'tool_call_count', 'input_tokens', 'output_tokens', 'cache_read_tokens', 'cache_write_tokens',
    'reasoning_tokens', 'billing_provider', 'billing_base_url', 'billing_mode', 'estimated_cost_usd', 'actual_cost_usd',
    'cost_status', 'cost_source', 'pricing_version', 'title', 'api_call_count', 'handoff_state', 'handoff_platform', 'handoff_error'],
  messages: ['id', 'session_id', 'role', 'content', 'tool_call_id', 'tool_calls', 'tool_name', 'timestamp', 'token_count',
    'finish_reason', 'reasoning', 'reasoning_content', 'reasoning_details', 'codex_reasoning_items', 'codex_message_items'],
  state_meta: ['key', 'value'],
  telegram_dm_topic_mode: ['chat_id', 'user_id', 'enabled', 'activated_at', 'updated_at', 'has_topics_enabled',
    'allows_users_to_create_topics', 'capability_checked_at', 'intro_message_id', 'pinned_message_id'],
  telegram_dm_topic_bindings: ['chat_id', 'thread_id', 'user_id', 'session_key', 'session_id', 'managed_mode', 'linked_at', 'updated_at'],
};

export interface UnknownColumn {
  table: string;
  column: string;
  /** Rows where it holds a value: data this import does not carry over. */
  rowsWithValue: number;
}

export interface ImportReport {
  source: string;
  schemaVersion: number | null;
  sessions: number;
  messages: number;
  meta: number;
  topicBindings: number;
  unknownColumns: UnknownColumn[];
  /** quick_check findings confined to the source's FTS indexes (not copied; the target indexes afresh). */
  ftsDamageIgnored: string[];
  seconds: number;
}

export interface ImportProgress {
  phase: 'sessions' | 'messages' | 'done';
  done: number;
  total: number;
}

const MESSAGE_PAGE = 5000;

/** Copy the database and its WAL files to a private directory; the original is only read. */
function snapshot(source: string): { file: string; dispose(): void } {
  if (!fs.existsSync(source)) throw new ImportError(source, 'no such file');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hsdb-import-'));
  const file = path.join(dir, 'state.db');
  try {
    fs.copyFileSync(source, file);
    for (const suffix of ['-wal', '-shm']) if (fs.existsSync(source + suffix)) fs.copyFileSync(source + suffix, file + suffix);
  } catch (error) {
    fs.rmSync(dir, { recursive: true, force: true });
    throw new ImportError(source, String(error), { cause: error });
  }
  return { file, dispose: () => fs.rmSync(dir, { recursive: true, force: true }) };
}

export interface ImportOptions {
  onProgress?: (p: ImportProgress) => void;
  /**
   * What to do when the store already holds *different* rows under ids the file also uses: 'refuse'
   * (default: an ImportError naming them, nothing written) or 'keep-target' (the store's rows win and the
   * file's are skipped). Rows identical to the file's (a re-run) are never a conflict.
   */
  onConflict?: 'refuse' | 'keep-target';
}

const sameTime = (a: number, b: number) => Math.abs(a - b) <= 1e-6;
const CHECK_CHUNK = 500;

/** Ids the file and the store share with different data (at most `limit` of them). */
async function conflicts(src: Database.Database, store: SessionStore, limit = 5): Promise<string[]> {
  const found: string[] = [];
  const sessions = src.prepare('SELECT id, source, started_at FROM sessions').all() as Array<{ id: unknown; source: unknown; started_at: unknown }>;
  for (let i = 0; i < sessions.length && found.length < limit; i += CHECK_CHUNK) {
    const chunk = sessions.slice(i, i + CHECK_CHUNK);
    const theirs = new Map(chunk.map((s) => [String(s.id), s]));
    for (const mine of await store.imports.existingSessions([...theirs.keys()])) {
      const t = theirs.get(mine.id)!;
      if (mine.source !== String(t.source) || !sameTime(mine.startedAt, Number(t.started_at))) found.push(`session ${mine.id}`);
    }
  }
  const page = src.prepare('SELECT id, session_id, role, timestamp FROM messages WHERE id > ? ORDER BY id LIMIT ?');
  for (let last = -1; found.length < limit; ) {
    const chunk = page.all(last, CHECK_CHUNK) as Array<{ id: number; session_id: unknown; role: unknown; timestamp: unknown }>;
    if (chunk.length === 0) break;
    last = Number(chunk[chunk.length - 1]!.id);
    const theirs = new Map(chunk.map((m) => [Number(m.id), m]));
    for (const mine of await store.imports.existingMessages([...theirs.keys()])) {
      const t = theirs.get(mine.id)!;
      if (mine.sessionId !== String(t.session_id) || mine.role !== String(t.role) || !sameTime(mine.timestamp, Number(t.timestamp))) {
        found.push(`message ${mine.id}`);
      }
    }
  }
  return found.slice(0, limit);
}

export async function importHermesStateDb(source: string, store: SessionStore, options: ImportOptions = {}): Promise<ImportReport> {
  const started = performance.now();
  const snap = snapshot(source);
  let db: Database.Database | undefined;
  let ftsDamage: string[] = [];
  try {
    try {
      db = new Database(snap.file, { fileMustExist: true });
      const problems = (db.pragma('quick_check(100)') as Array<Record<string, string>>).map((r) => Object.values(r)[0]!).filter((m) => m !== 'ok');
      // The FTS indexes are derived data that the target rebuilds; damage confined to them does not block
      // an import (some SQLite versions call Hermes' trigram index malformed because of "\x00json:").
      ftsDamage = problems.filter((m) => /\bFTS5 table\b|messages_fts/.test(m));
      const structural = problems.filter((m) => !ftsDamage.includes(m));
      if (structural.length > 0) throw new ImportError(source, `the database is damaged (quick_check: ${structural.slice(0, 3).join('; ')})`);
    } catch (error) {
      if (error instanceof ImportError) throw error;
      throw new ImportError(source, error instanceof Error ? error.message : String(error), { cause: error });
    }
    const src = db;
    const tables = new Set(src.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").pluck().all() as string[]);
    for (const required of ['sessions', 'messages']) {
      if (!tables.has(required)) throw new ImportError(source, `it has no "${required}" table; is it a Hermes state.db?`);
    }
    const columnsOf = (t: string) => (src.prepare('SELECT name FROM pragma_table_info(?)').pluck().all(t) as string[]);
    const unknownColumns: UnknownColumn[] = [];
    for (const [table, known] of Object.entries(KNOWN)) {
      if (!tables.has(table)) continue;
      for (const column of columnsOf(table).filter((c) => !known.includes(c))) {
        const quoted = `"${column.replace(/"/g, '""')}"`;
        const rowsWithValue = src.prepare(`SELECT COUNT(*) FROM "${table}" WHERE ${quoted} IS NOT NULL`).pluck().get() as number;
        unknownColumns.push({ table, column, rowsWithValue });
      }
    }
    const schemaVersion = tables.has('schema_version')
      ? ((src.prepare('SELECT version FROM schema_version LIMIT 1').pluck().get() as number | undefined) ?? null)
      : null;
    const storeIsEmpty = (await store.sessionCount()) === 0 && (await store.messageCount()) === 0;
    if (!storeIsEmpty && (options.onConflict ?? 'refuse') === 'refuse') {
      const clashes = await conflicts(src, store);
      if (clashes.length > 0) {
        throw new ImportError(
          source,
          `${store.url} already holds different data under ids the file uses (${clashes.join(', ')}…); ` +
            'nothing was imported. Import into an empty store, or pass onConflict: "keep-target" (CLI: --merge keep-target) to keep the store\'s rows.',
        );
      }
    }
    const read = (table: string) => (tables.has(table) ? (src.prepare(`SELECT * FROM "${table}"`).all() as RawRow[]) : []);

    const sessions = read('sessions');
    options.onProgress?.({ phase: 'sessions', done: 0, total: sessions.length });
    await store.imports.insertSessions(sessions);
    await store.imports.linkParents(
      sessions.filter((s) => s.parent_session_id !== null && s.parent_session_id !== undefined).map((s) => [String(s.id), String(s.parent_session_id)]),
    );
    options.onProgress?.({ phase: 'sessions', done: sessions.length, total: sessions.length });

    const totalMessages = src.prepare('SELECT COUNT(*) FROM messages').pluck().get() as number;
    const page = src.prepare('SELECT * FROM messages WHERE id > ? ORDER BY id LIMIT ?');
    let last = -1;
    let done = 0;
    for (;;) {
      const rows = page.all(last, MESSAGE_PAGE) as RawRow[];
      if (rows.length === 0) break;
      await store.imports.insertMessages(rows);
      last = Number(rows[rows.length - 1]!.id);
      done += rows.length;
      options.onProgress?.({ phase: 'messages', done, total: totalMessages });
    }
    await store.imports.advanceIds();
    const meta = read('state_meta');
    await store.imports.insertMeta(meta);
    const bindings = read('telegram_dm_topic_bindings');
    await store.imports.insertTopics(read('telegram_dm_topic_mode'), bindings);
    options.onProgress?.({ phase: 'done', done, total: totalMessages });
    return {
      source,
      schemaVersion,
      sessions: sessions.length,
      messages: done,
      meta: meta.length,
      topicBindings: bindings.length,
      unknownColumns,
      ftsDamageIgnored: ftsDamage,
      seconds: (performance.now() - started) / 1000,
    };
  } finally {
    db?.close();
    snap.dispose();
  }
}
