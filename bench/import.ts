/**
 * Import, copy and verify rates: a Hermes-format state.db of BENCH_MESSAGES messages (built here with Hermes'
 * own DDL and FTS triggers), or the file BENCH_IMPORT_SOURCE names (Hermes' own, e.g. the 200,000-message
 * fixture), imported into an SQLite file, into Postgres and into MariaDB/MySQL (MYSQL_URL), then copied
 * between SQLite and Postgres.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import mysql from 'mysql2/promise';
import postgres from 'postgres';
import { copyStore, importHermesStateDb, openStore, verifyStores } from '../src/index.js';
import { HERMES_V11_DDL } from '../test/helpers/hermes-schema.js';
import { corpus } from '../test/helpers/corpus.js';

const FTS_DDL = fs
  .readFileSync(new URL('../drizzle/sqlite/0002_fts5_search.sql', import.meta.url), 'utf8')
  .split('--> statement-breakpoint');

/** Peak RSS of a separate process importing `source` into a fresh SQLite file. */
function importPeakRss(source: string, target: string): { messages: number; peakRssMiB: number } {
  const out = execFileSync(
    process.execPath,
    ['--import', 'tsx', fileURLToPath(new URL('./import-rss.ts', import.meta.url)), source, target],
    { encoding: 'utf8' },
  );
  return JSON.parse(out.trim().split('\n').pop()!) as { messages: number; peakRssMiB: number };
}

export interface ExportFigures {
  messages: number;
  seconds: number;
  peakRssMiB: number;
  stallMs: number;
}

/** A separate process exporting an SQLite store to JSON lines with the CLI (export-rss.ts): its peak RSS, longest stall, time. */
function exportFigures(store: string, out: string, messages: number): ExportFigures {
  const raw = execFileSync(
    process.execPath,
    ['--import', 'tsx', fileURLToPath(new URL('./export-rss.ts', import.meta.url)), `sqlite:${store}`, out],
    { encoding: 'utf8' },
  );
  const figures = JSON.parse(raw.trim().split('\n').pop()!) as ExportFigures & { code: number; note: string };
  if (figures.code !== 0) throw new Error(`export failed: ${figures.note}`);
  return { messages, seconds: figures.seconds, peakRssMiB: figures.peakRssMiB, stallMs: figures.stallMs };
}

export interface ImportRow {
  target: string;
  messages: number;
  seconds: number;
  rate: number;
}

export function buildHermesFile(file: string, total: number): void {
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.exec(HERMES_V11_DDL);
  for (const stmt of FTS_DDL) db.exec(stmt);
  db.exec('INSERT INTO schema_version (version) VALUES (11)');
  const insertSession = db.prepare(
    'INSERT OR IGNORE INTO sessions (id, source, started_at, message_count) VALUES (?, ?, ?, 0)',
  );
  const insertMessage = db.prepare(
    'INSERT INTO messages (session_id, role, content, tool_name, tool_calls, timestamp) VALUES (?, ?, ?, ?, ?, ?)',
  );
  const bump = db.prepare('UPDATE sessions SET message_count = message_count + 1 WHERE id = ?');
  let t = 1_780_000_000;
  db.transaction(() => {
    for (const m of corpus(total, 11)) {
      t += 0.5;
      insertSession.run(m.session, m.source, t);
      insertMessage.run(
        m.session,
        m.role,
        m.content,
        m.toolName ?? null,
        m.toolCalls ? JSON.stringify(m.toolCalls) : null,
        t,
      );
      bump.run(m.session);
    }
  })();
  db.close();
}

export async function benchImport(
  total: number,
  adminUrl: string,
): Promise<{ rows: ImportRow[]; notes: string[]; exported?: ExportFigures }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hsdb-import-bench-'));
  const rows: ImportRow[] = [];
  const notes: string[] = [];
  let exported: ExportFigures | undefined;
  const row = (target: string, messages: number, seconds: number) =>
    rows.push({ target, messages, seconds, rate: messages / seconds });
  try {
    const given = process.env.BENCH_IMPORT_SOURCE;
    const source = given ?? path.join(dir, 'state.db');
    if (given === undefined) buildHermesFile(source, total);
    else notes.push(`source: ${given}`);
    const rss = importPeakRss(source, path.join(dir, 'rss.db'));
    notes.push(
      `peak RSS of a process importing ${rss.messages.toLocaleString('en-US')} messages into SQLite: ${rss.peakRssMiB.toFixed(0)} MiB`,
    );
    const sqlite = await openStore(`sqlite:${path.join(dir, 'target.db')}`);
    try {
      const a = await importHermesStateDb(source, sqlite);
      row('import → sqlite (FULL)', a.messages, a.seconds);
      const started = performance.now();
      const v = await importHermesStateDb(source, sqlite, { verify: true });
      if (!v.verification?.ok) notes.push(`verify failed: ${v.verification?.problems.join('; ')}`);
      row('re-run + verify, sqlite', v.messages, (performance.now() - started) / 1000);
    } finally {
      await sqlite.close();
    }
    exported = exportFigures(path.join(dir, 'target.db'), path.join(dir, 'export.jsonl'), rss.messages);
    fs.rmSync(path.join(dir, 'export.jsonl'), { force: true });
    await mariadbImport(source, row, notes);
    const admin = postgres(adminUrl, { max: 1, onnotice: () => {}, connect_timeout: 5 });
    try {
      await admin`select 1`;
    } catch {
      notes.push('Postgres import and copy skipped: server unreachable');
      await admin.end();
      return { rows, notes, exported };
    }
    const names = [`hsdb_import_bench_${Date.now()}`, `hsdb_copy_bench_${Date.now()}`];
    const urlOf = (name: string) => {
      const url = new URL(adminUrl);
      url.pathname = `/${name}`;
      return url.toString();
    };
    for (const name of names) await admin.unsafe(`CREATE DATABASE "${name}"`);
    try {
      const pg = await openStore(urlOf(names[0]!));
      const sqliteAgain = await openStore(`sqlite:${path.join(dir, 'target.db')}`, { readonly: true, migrate: false });
      const copyTarget = await openStore(`sqlite:${path.join(dir, 'copy.db')}`);
      const pg2 = await openStore(urlOf(names[1]!));
      try {
        const b = await importHermesStateDb(source, pg);
        row('import → postgres', b.messages, b.seconds);
        const c = await copyStore(pg, copyTarget);
        row('copy postgres → sqlite', c.messages, c.seconds);
        const d = await copyStore(sqliteAgain, pg2);
        row('copy sqlite → postgres', d.messages, d.seconds);
        const started = performance.now();
        const report = await verifyStores(sqliteAgain, pg2);
        if (!report.ok) notes.push(`verify failed: ${report.problems.join('; ')}`);
        row('verify sqlite vs postgres', report.messages.from, (performance.now() - started) / 1000);
      } finally {
        await Promise.all([pg.close(), sqliteAgain.close(), copyTarget.close(), pg2.close()]);
      }
    } finally {
      for (const name of names) await admin.unsafe(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      await admin.end();
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
  return { rows, notes, exported };
}

/** The same import into a fresh MariaDB/MySQL database (MYSQL_URL, default the local server). */
async function mariadbImport(
  source: string,
  row: (target: string, messages: number, seconds: number) => void,
  notes: string[],
): Promise<void> {
  const adminUrl = process.env.MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/test';
  let admin: mysql.Connection;
  try {
    admin = await mysql.createConnection({ uri: adminUrl, connectTimeout: 5000 });
  } catch {
    notes.push('MariaDB import skipped: server unreachable');
    return;
  }
  const name = `hsdb_import_bench_${Date.now()}`;
  try {
    await admin.query(`CREATE DATABASE \`${name}\``);
    const url = new URL(adminUrl);
    url.pathname = `/${name}`;
    const store = await openStore(url.toString());
    try {
      const imported = await importHermesStateDb(source, store);
      row('import → mariadb', imported.messages, imported.seconds);
    } finally {
      await store.close();
    }
  } finally {
    await admin.query(`DROP DATABASE IF EXISTS \`${name}\``);
    await admin.end();
  }
}
