/** Temporary copies of the shipped migrations with extra migrations added, to play "newer" or "branch" versions. */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export type MigrationDialect = 'sqlite' | 'pg' | 'mysql';

export interface ExtraMigration {
  tag: string;
  /** Journal timestamp (ms). */
  when: number;
  sql: string;
}

export const shippedFolder = (dialect: MigrationDialect) =>
  fileURLToPath(new URL(`../../drizzle/${dialect}`, import.meta.url));

interface Journal {
  version: string;
  dialect: string;
  entries: Array<{ idx: number; version: string; when: number; tag: string; breakpoints: boolean }>;
}

export function readJournal(folder: string): Journal {
  return JSON.parse(fs.readFileSync(path.join(folder, 'meta', '_journal.json'), 'utf8')) as Journal;
}

/** The newest journal timestamp shipped for a dialect. */
export function latestWhen(dialect: MigrationDialect): number {
  return Math.max(...readJournal(shippedFolder(dialect)).entries.map((e) => e.when));
}

/** A copy of the shipped folder plus `extras`, journal sorted by `when`. */
export function folderWith(dialect: MigrationDialect, extras: ExtraMigration[]): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `hsdb-migrations-${dialect}-`));
  fs.cpSync(shippedFolder(dialect), dir, { recursive: true });
  const journal = readJournal(dir);
  for (const extra of extras) {
    fs.writeFileSync(path.join(dir, `${extra.tag}.sql`), extra.sql);
    journal.entries.push({
      idx: 0,
      version: journal.entries[0]!.version,
      when: extra.when,
      tag: extra.tag,
      breakpoints: true,
    });
  }
  for (const [i, e] of journal.entries.sort((a, b) => a.when - b.when).entries()) e.idx = i;
  fs.writeFileSync(path.join(dir, 'meta', '_journal.json'), JSON.stringify(journal, null, 2));
  return dir;
}

/** A copy of the shipped migrations of a dialect that stops at `lastTag`: a store as an older version left it. */
export function folderUpTo(dialect: MigrationDialect, lastTag: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `hsdb-migrations-${dialect}-upto-`));
  fs.cpSync(shippedFolder(dialect), dir, { recursive: true });
  const journal = readJournal(dir);
  const keep = journal.entries.findIndex((e) => e.tag === lastTag);
  if (keep < 0) throw new Error(`no migration ${lastTag} in ${shippedFolder(dialect)}`);
  for (const e of journal.entries.slice(keep + 1)) {
    fs.rmSync(path.join(dir, `${e.tag}.sql`));
    fs.rmSync(path.join(dir, 'meta', `${e.tag.slice(0, 4)}_snapshot.json`), { force: true });
  }
  journal.entries = journal.entries.slice(0, keep + 1);
  fs.writeFileSync(path.join(dir, 'meta', '_journal.json'), JSON.stringify(journal, null, 2));
  return dir;
}

/** A copy of the shipped Postgres migrations that stops at `lastTag`. */
export const pgFolderUpTo = (lastTag: string): string => folderUpTo('pg', lastTag);
