/** How the commands open stores: created and migrated only by the commands that write, otherwise only read. */
import fs from 'node:fs';
import { readStoreUrl, redactUrl } from '../db/url.js';
import { StoreNotFoundError } from '../errors.js';
import type { SessionStore } from '../store.js';
import { openStore } from './lazy.js';
import { NotReadyError, UsageError } from './shared.js';

/** Run `body` on an open store, closing it afterwards whatever happens. */
export async function using(store: SessionStore, body: (store: SessionStore) => Promise<void>): Promise<void> {
  try {
    await body(store);
  } finally {
    await store.close();
  }
}

/**
 * The open options that put a store in `schema` (the `--schema` flags). Given for a store of an engine without
 * schemas it is a usage error: ignoring the flag would quietly read another store.
 */
export function inSchema(url: string, schema: string | undefined): { schema?: string } {
  if (schema === undefined) return {};
  const { engine } = readStoreUrl(url);
  if (!engine.hasSchemas) {
    throw new UsageError(`--schema does not apply to ${redactUrl(url)}: a ${engine.name} store, which has no schemas`);
  }
  return { schema };
}

/** Where a store URL points (a file, a directory, memory, a server). */
export const placeOf = (url: string) => {
  const { engine, location } = readStoreUrl(url);
  return engine.where(location);
};

/** Files are opened read-only by the commands that only read them: not even the journal mode changes. */
export const readsAsFile = (url: string) => placeOf(url).kind === 'file';

/** Run `body` on the store at `url`, created if missing and (unless `migrate` is false) migrated first. */
export async function withStore(
  url: string,
  schema: string | undefined,
  body: (store: SessionStore) => Promise<void>,
  migrate = true,
): Promise<void> {
  await using(await openStore(url, { migrate, ...inSchema(url, schema) }), body);
}

/** For the commands that only read: see openForReading. */
export async function readingStore(
  url: string,
  schema: string | undefined,
  body: (store: SessionStore) => Promise<void>,
): Promise<void> {
  await using(await openForReading(url, schema), body);
}

/** A Hermes state.db (not one of our stores): an SQLite file without our migration history. */
export async function isHermesFile(url: string): Promise<string | null> {
  const place = placeOf(url);
  if (place.kind !== 'file' || !fs.existsSync(place.path)) return null;
  let store: SessionStore | undefined;
  try {
    store = await openStore(url, { migrate: false, readonly: true });
    const status = await store.migrationStatus();
    return status.applied.length > 0 || status.unknownHashes.length > 0 ? null : place.path;
  } catch {
    return null; // not readable as SQLite: let openStore report it
  } finally {
    await store?.close();
  }
}

/**
 * Open a store for a command that only reads it: never created (a missing file or directory is an error naming
 * it), never migrated (pending migrations are an error saying to run migrate first).
 */
export async function openForReading(url: string, schema?: string): Promise<SessionStore> {
  const migrateFirst = `run \`hermes-sessiondb migrate --db ${redactUrl(url)}${schema ? ` --schema ${schema}` : ''}\` first`;
  let store: SessionStore;
  try {
    store = await openStore(url, {
      migrate: false,
      mustExist: true,
      readonly: readsAsFile(url),
      ...inSchema(url, schema),
    });
  } catch (error) {
    if (error instanceof StoreNotFoundError && error.reason === 'NO_STORE') {
      throw new NotReadyError(`${error.message}. To create a store there, ${migrateFirst}.`, { cause: error });
    }
    throw error;
  }
  try {
    const status = await store.migrationStatus();
    if (status.unknownHashes.length > 0) {
      throw new NotReadyError(
        `${store.url} was migrated by a newer version of hermes-sessiondb (${status.unknownHashes.length} migration(s) this one does not know); upgrade hermes-sessiondb`,
      );
    }
    if (status.applied.length === 0) {
      throw new NotReadyError(
        `${store.url} holds no hermes-sessiondb store (no migration history). To create one there, ${migrateFirst}; to read a Hermes state.db, import it: hermes-sessiondb import <state.db> --to <store>.`,
      );
    }
    if (status.pending.length > 0) {
      throw new NotReadyError(
        `${store.url} has ${status.pending.length} pending migration(s) (${status.pending.join(', ')}): ${migrateFirst}.`,
      );
    }
    return store;
  } catch (error) {
    await store.close();
    throw error;
  }
}

/**
 * The store a command copies or verifies from: only read, never created (a missing one is an error naming it).
 */
export const openSourceStore = (url: string, schema?: string) =>
  openStore(url, {
    migrate: false,
    mustExist: true,
    readonly: readsAsFile(url),
    ...inSchema(url, schema),
  });
