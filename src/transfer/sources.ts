/**
 * Where transferred rows come from: a Hermes state.db (read through a private snapshot) or one of our
 * stores. Both hand out rows in Hermes' stored form (snake_case, epoch-second times, JSON as text,
 * structured content as "\x00json:" + JSON), so import, copy and verify share one pipeline.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import Database from 'better-sqlite3';
import { SqliteWorker } from '../db/sqlite/worker.js';
import { SessionDbError } from '../errors.js';
import { DERIVED_SESSION_COLUMNS, HERMES_SESSION_COLUMNS } from '../schema/hermes-columns.js';
import type { RawRow } from '../repos/import.js';
import { MESSAGE_COLUMNS } from '../sql/message-columns.js';
import type { SessionStore } from '../store.js';

export interface RowSource {
  /** The file or URL, for messages. */
  readonly label: string;
  /** Every session (sessions are few next to messages; they are held in memory). */
  sessions(): Promise<RawRow[]>;
  messageCount(): Promise<number>;
  /**
   * The largest message id, or null without messages. Optional for sources written before it existed: with it,
   * a transfer reserves the source's ids first, so a message appended to the target meanwhile never takes one.
   */
  maxMessageId?(): Promise<number | null>;
  /** Up to `limit` messages with ids above `afterId`, in id order. */
  messagePage(afterId: number, limit: number): Promise<RawRow[]>;
  meta(): Promise<RawRow[]>;
  topicModes(): Promise<RawRow[]>;
  topicBindings(): Promise<RawRow[]>;
}

/** Messages read per read of a source: a 5,000-row read of a SQLite file held the event loop for 35-50 ms. */
export const MESSAGE_READ_SLICE = 1000;

/**
 * Up to `limit` messages of `source` after `afterId`, in id order, read a slice at a time with the event
 * loop free between slices (a SQLite source reads synchronously). Every slice starts after the last id of
 * the one before, so the page is the one a single read would give.
 */
export async function readMessagePage(source: RowSource, afterId: number, limit: number): Promise<RawRow[]> {
  const page: RawRow[] = [];
  let last = afterId;
  while (page.length < limit) {
    if (page.length > 0) await yieldToEventLoop();
    const want = Math.min(MESSAGE_READ_SLICE, limit - page.length);
    const slice = await source.messagePage(last, want);
    for (const row of slice) page.push(row);
    if (slice.length < want) break;
    last = Number(slice[slice.length - 1]!.id);
  }
  return page;
}

/** A store as a row source (for copy and verify). */
export function storeSource(store: SessionStore): RowSource {
  const r = store.bulkRead;
  return {
    label: store.url,
    sessions: () => r.sessions(),
    messageCount: () => r.messageCount(),
    maxMessageId: () => r.maxMessageId(),
    messagePage: (afterId, limit) => r.messagePage(afterId, limit),
    meta: () => r.meta(),
    topicModes: () => r.topicModes(),
    topicBindings: () => r.topicBindings(),
  };
}

export class ImportError extends SessionDbError {
  readonly file: string;
  constructor(file: string, reason: string, options?: { cause?: unknown }) {
    super('VALIDATION', `Cannot import ${file}: ${reason}`, options);
    this.file = file;
  }
}

/** Columns of each table that map onto our schema (everything else is reported). */
const KNOWN: Record<string, string[]> = {
  // The derived ones are kept by triggers in a file this library wrote; the target computes its own.
  sessions: [...HERMES_SESSION_COLUMNS, ...DERIVED_SESSION_COLUMNS],
  messages: [...MESSAGE_COLUMNS],
  state_meta: ['key', 'value'],
  telegram_dm_topic_mode: [
    'chat_id',
    'user_id',
    'enabled',
    'activated_at',
    'updated_at',
    'has_topics_enabled',
    'allows_users_to_create_topics',
    'capability_checked_at',
    'intro_message_id',
    'pinned_message_id',
  ],
  telegram_dm_topic_bindings: [
    'chat_id',
    'thread_id',
    'user_id',
    'session_key',
    'session_id',
    'managed_mode',
    'linked_at',
    'updated_at',
  ],
};

/** Tables of Hermes' own machinery that hold nothing to carry over (FTS shadow tables are matched by prefix). */
const FTS_SHADOW = /^messages_fts/;
const INTERNAL_TABLES = new Set([
  'schema_version',
  'sqlite_sequence',
  'sqlite_stat1',
  'sqlite_stat4',
  'system_prompts',
]);

export interface UnknownColumn {
  table: string;
  column: string;
  /** Rows where it holds a value: data this import does not carry over. */
  rowsWithValue: number;
}

export interface UnknownTable {
  table: string;
  rows: number;
}

/** Bytes copied per backup step: a few milliseconds of work between event-loop turns. */
const SNAPSHOT_STEP_BYTES = 1 << 20;

/**
 * Copy `file` to `copy` as of one point in time, without writing to `file`. The backup runs inside one
 * read transaction on the source connection, so every step reads the same snapshot: a writer in another
 * process can neither tear the copy nor make SQLite restart it (a backup restarts when a step begins a new
 * read and finds the file changed, which a steady writer could make happen forever). In WAL mode the
 * writer is not held up; in rollback-journal mode its commits wait until the copy is taken.
 */
async function snapshot(file: string, copy: string): Promise<void> {
  // In a worker thread: better-sqlite3 runs backup steps (and the copy's final fsync) on its own thread's loop.
  const source = new SqliteWorker({ file, readonly: true, busyTimeoutMs: 1000, synchronous: 'OFF' });
  try {
    const [page] = (await source.statement('PRAGMA page_size', [], true)) as Array<{ page_size: number }>;
    await source.snapshot(copy, Math.max(1, Math.floor(SNAPSHOT_STEP_BYTES / (page?.page_size ?? 4096))));
  } finally {
    await source.close();
  }
}

const quote = (name: string) => `"${name.replace(/"/g, '""')}"`;

/** What opening a snapshot learns from reads of the whole file, each a scan of every page or row. */
interface SnapshotProbe {
  quickCheck: string[];
  tables: Set<string>;
  columns: Map<string, string[]>;
  /** Rows holding a value, per `table.column` not in KNOWN. */
  unknownColumnRows: Map<string, number>;
  /** Rows per table not in KNOWN (and not internal). */
  unknownTableRows: Map<string, number>;
  orphans: RawRow[];
}

/**
 * The whole-file reads of a snapshot, in a worker thread on its own connection: quick_check reads every page
 * (seconds for a large file), the orphan and unknown-column queries scan the messages (~300 ms cold at 200,000
 * messages). On the event loop they were single synchronous stretches.
 */
async function probeSnapshot(file: string): Promise<SnapshotProbe> {
  const worker = new SqliteWorker({ file, busyTimeoutMs: 1000, synchronous: 'OFF' });
  type Row = Record<string, unknown>;
  // Fixed statements only: SQL built from the file's own names goes through worker.statement directly (the SQL lint counts it).
  const all = (text: string, params: unknown[] = []) => worker.statement(text, params, true) as Promise<Row[]>;
  try {
    const tables = new Set(
      (await all("SELECT name FROM sqlite_master WHERE type = 'table'")).map((r) => String(r.name)),
    );
    // Every b-tree, one table at a time (the FTS5 shadow tables included), but not FTS5's own check of its
    // inverted index against the text, which reads every entry: most of a whole-file quick_check (1.3 of
    // 1.4 s at 200,000 messages), for indexes the import never reads (the target builds its own).
    const quickCheck: string[] = [];
    const btrees = await all(
      "SELECT name FROM sqlite_master WHERE type = 'table' AND sql NOT LIKE 'CREATE VIRTUAL TABLE%' UNION ALL SELECT 'sqlite_master'",
    );
    for (const { name } of btrees) {
      const table = String(name);
      const found = (await worker.statement(`PRAGMA quick_check(${quote(table)})`, [], true)) as Row[];
      for (const row of found) {
        const message = String(Object.values(row)[0]);
        quickCheck.push(message === 'ok' ? message : `${table}: ${message}`);
      }
    }
    const columns = new Map<string, string[]>();
    for (const table of tables)
      columns.set(
        table,
        (await all('SELECT name FROM pragma_table_info(?)', [table])).map((r) => String(r.name)),
      );
    const unknownColumnRows = new Map<string, number>();
    for (const [table, known] of Object.entries(KNOWN)) {
      for (const column of (columns.get(table) ?? []).filter((c) => !known.includes(c))) {
        const [row] = (await worker.statement(
          `SELECT COUNT(*) AS n FROM ${quote(table)} WHERE ${quote(column)} IS NOT NULL`,
          [],
          true,
        )) as Row[];
        unknownColumnRows.set(`${table}.${column}`, Number(row?.n ?? 0));
      }
    }
    const unknownTableRows = new Map<string, number>();
    for (const table of tables) {
      if (table in KNOWN || INTERNAL_TABLES.has(table) || FTS_SHADOW.test(table)) continue;
      const [row] = (await worker.statement(`SELECT COUNT(*) AS n FROM ${quote(table)}`, [], true)) as Row[];
      unknownTableRows.set(table, Number(row?.n ?? 0));
    }
    let orphans: RawRow[] = [];
    if (tables.has('sessions') && tables.has('messages')) {
      const referencing = ['SELECT session_id AS id, timestamp AS t FROM messages'];
      if (tables.has('telegram_dm_topic_bindings'))
        referencing.push('SELECT session_id, linked_at FROM telegram_dm_topic_bindings');
      orphans = (await worker.statement(
        `SELECT id, MIN(t) AS started_at FROM (${referencing.join(' UNION ALL ')})
                  WHERE id IS NOT NULL AND id NOT IN (SELECT id FROM sessions) GROUP BY id ORDER BY id`,
        [],
        true,
      )) as Row[];
    }
    return { quickCheck, tables, columns, unknownColumnRows, unknownTableRows, orphans };
  } finally {
    await worker.close();
  }
}

/** A Hermes state.db, read through a private snapshot (SQLite's online backup); `close()` removes it. */
export class HermesFileSource implements RowSource {
  readonly label: string;
  readonly schemaVersion: number | null;
  readonly unknownColumns: UnknownColumn[] = [];
  /** Tables other than the ones this library maps (later Hermes versions add several): not carried over. */
  readonly unknownTables: UnknownTable[] = [];
  /**
   * Sessions that messages or topic bindings refer to but the file lacks (Hermes runs without foreign key
   * enforcement): imported as stub sessions (source "unknown", started at their first message) so that no
   * message is lost.
   */
  readonly orphanSessions: string[] = [];
  /** quick_check findings confined to the source's FTS index tables (not copied; the target indexes afresh). */
  readonly ftsDamageIgnored: string[];
  private readonly db: Database.Database;
  private readonly tables: Set<string>;
  private readonly dir: string;
  /** v25+ files keep system prompts once, in system_prompts(hash, prompt), referenced by sessions.system_prompt_hash. */
  private readonly promptsByHash: boolean;
  private readonly orphans: RawRow[];

  /**
   * Snapshot `file` (opened read-only; Hermes may be writing it) with SQLite's online backup API and open
   * the snapshot. Resolves once the copy is taken; the event loop turns between backup steps.
   */
  static async open(file: string): Promise<HermesFileSource> {
    if (!fs.existsSync(file)) throw new ImportError(file, 'no such file');
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hsdb-import-'));
    try {
      const copy = path.join(dir, 'state.db');
      await snapshot(file, copy);
      return new HermesFileSource(file, dir, copy, await probeSnapshot(copy));
    } catch (error) {
      fs.rmSync(dir, { recursive: true, force: true });
      if (error instanceof ImportError) throw error;
      throw new ImportError(file, error instanceof Error ? error.message : String(error), { cause: error });
    }
  }

  private constructor(file: string, dir: string, copy: string, probe: SnapshotProbe) {
    this.label = file;
    this.dir = dir;
    const db = new Database(copy, { fileMustExist: true });
    this.db = db;
    try {
      const problems = probe.quickCheck.filter((m) => m !== 'ok');
      // The FTS indexes are derived data that the target rebuilds; damage confined to them does not block
      // an import (some SQLite versions call Hermes' trigram index malformed because of "\x00json:").
      this.ftsDamageIgnored = problems.filter((m) => /\bFTS5 table\b|messages_fts/.test(m));
      const structural = problems.filter((m) => !this.ftsDamageIgnored.includes(m));
      if (structural.length > 0)
        throw new ImportError(file, `the database is damaged (quick_check: ${structural.slice(0, 3).join('; ')})`);
      this.tables = probe.tables;
      for (const required of ['sessions', 'messages']) {
        if (!this.tables.has(required))
          throw new ImportError(file, `it has no "${required}" table; is it a Hermes state.db?`);
      }
      const columnsOf = (t: string) => probe.columns.get(t) ?? [];
      this.promptsByHash =
        this.tables.has('system_prompts') &&
        columnsOf('sessions').includes('system_prompt_hash') &&
        ['hash', 'prompt'].every((c) => columnsOf('system_prompts').includes(c));
      for (const [table, known] of Object.entries(KNOWN)) {
        if (!this.tables.has(table)) continue;
        const mapped = table === 'sessions' && this.promptsByHash ? [...known, 'system_prompt_hash'] : known;
        for (const column of columnsOf(table).filter((c) => !mapped.includes(c))) {
          this.unknownColumns.push({
            table,
            column,
            rowsWithValue: probe.unknownColumnRows.get(`${table}.${column}`) ?? 0,
          });
        }
      }
      for (const [table, rows] of [...probe.unknownTableRows].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
        this.unknownTables.push({ table, rows });
      }
      this.orphans = probe.orphans;
      this.orphanSessions.push(...this.orphans.map((o) => String(o.id)));
      this.schemaVersion = this.tables.has('schema_version')
        ? ((db.prepare('SELECT version FROM schema_version LIMIT 1').pluck().get() as number | undefined) ?? null)
        : null;
    } catch (error) {
      db.close();
      throw error instanceof ImportError
        ? error
        : new ImportError(file, error instanceof Error ? error.message : String(error), { cause: error });
    }
  }

  private all(table: string, order: string): RawRow[] {
    return this.tables.has(table)
      ? (this.db.prepare(`SELECT * FROM "${table}" ORDER BY ${order}`).all() as RawRow[])
      : [];
  }

  async sessions(): Promise<RawRow[]> {
    const sessions = this.all('sessions', 'id');
    if (this.promptsByHash) {
      const prompts = new Map(
        this.db.prepare('SELECT hash, prompt FROM system_prompts').raw().all() as Array<[unknown, unknown]>,
      );
      for (const s of sessions) {
        if ((s.system_prompt === null || s.system_prompt === undefined) && s.system_prompt_hash != null)
          s.system_prompt = prompts.get(s.system_prompt_hash) ?? null;
      }
    }
    for (const o of this.orphans) sessions.push({ id: o.id, source: 'unknown', started_at: o.started_at ?? 0 });
    return sessions;
  }

  async messageCount(): Promise<number> {
    return this.db.prepare('SELECT COUNT(*) FROM messages').pluck().get() as number;
  }

  async maxMessageId(): Promise<number | null> {
    return this.db.prepare('SELECT MAX(id) FROM messages').pluck().get() as number | null;
  }

  async messagePage(afterId: number, limit: number): Promise<RawRow[]> {
    return this.db.prepare('SELECT * FROM messages WHERE id > ? ORDER BY id LIMIT ?').all(afterId, limit) as RawRow[];
  }

  async meta(): Promise<RawRow[]> {
    return this.all('state_meta', 'key');
  }

  async topicModes(): Promise<RawRow[]> {
    return this.all('telegram_dm_topic_mode', 'chat_id');
  }

  async topicBindings(): Promise<RawRow[]> {
    return this.all('telegram_dm_topic_bindings', 'chat_id, thread_id');
  }

  close(): void {
    this.db.close();
    fs.rmSync(this.dir, { recursive: true, force: true });
  }
}
