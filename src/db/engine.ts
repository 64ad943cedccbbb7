/**
 * What one engine tells the shared code: how it reads a store URL, which client it drives, how it opens a
 * store, and what differs around opening. One descriptor per engine (`src/db/<engine>/engine.ts`), listed
 * once in `src/db/engines.ts`; nothing outside an engine's folder and the registry branches on an engine.
 * A descriptor is light to import (the CLI reads URLs through it): its driver, Drizzle and its SQL are
 * loaded by `open`, on demand.
 */
import type { z } from 'zod';
import type { OpenStoreOptions, openStoreOptionsSchema } from '../open.js';
import type { AnySessionStore } from '../store.js';
import type { Backend } from './backend.js';
import type { MissingStructure } from './search-structures.js';

/** Where a store lives, as far as the shared code needs to know (the CLI's read-only files, the copy's identity). */
export type StorePlace =
  | { kind: 'memory' }
  | { kind: 'file' | 'directory'; path: string }
  | { kind: 'server'; url: string };

/** The options openStore parsed, defaults filled in. */
export type ParsedOpenOptions = z.output<typeof openStoreOptionsSchema>;

/** Options that only a pool opened from a URL takes (a client passed in was configured by the app). */
export const POOL_OPTIONS = ['ssl', 'statementTimeoutMs', 'poolSize', 'connectTimeoutSeconds'] as const;
export type PoolOption = (typeof POOL_OPTIONS)[number];

/** What an engine opened: the backend, the store over it, and its steps around the shared tail. */
export interface OpenedStore {
  readonly backend: Backend & { missingSearchStructures(): Promise<MissingStructure[]> };
  readonly store: AnySessionStore;
  /** Refuse a database the store cannot serve, before migrating (Postgres: its locale). */
  check?(): Promise<void>;
  /** Once every check passed: settings for serving (SQLite: the short busy timeout). */
  serve?(): void;
}

/** How an engine refuses a URL it reads: InvalidUrlError with the URL redacted. */
export interface UrlReader {
  refuse(reason: string): never;
  /** A scheme no engine reads. */
  unsupported(): never;
}

/** How to open: from a location the engine parsed, or a client of the engine's that the app passed in. */
export type OpenRequest<L, C> = { location: L; client?: undefined } | { client: C; location?: undefined };

export interface EngineDescriptor<
  Name extends string = string,
  L extends { backend: string } = { backend: string },
  C extends { kind: string; client: unknown } = { kind: string; client: unknown },
> {
  /** `store.dialect`, the folder under `drizzle/`. */
  readonly name: Name;
  /** Whether a store can live in a schema of the database (the `schema` option, the CLI's --schema). */
  readonly hasSchemas: boolean;
  /** The URL forms it reads, as the message refusing an unknown scheme lists them. */
  readonly schemes: readonly string[];
  /** A URL whose authority follows its scheme without `//` (so a password in it is found and redacted). */
  readonly bareAuthority?: RegExp;
  /** Its location for `url`, undefined when the scheme is not its own (`reader` refuses a malformed one). */
  parseUrl(url: string, reader: UrlReader): L | undefined;
  /** The engine that reads a URL without a scheme (a bare path) gives this. */
  parseBarePath?(path: string, reader: UrlReader): L;
  /** The password as its driver reads `url` (when that differs from the URL parser's), for redaction. */
  urlPasswords?(url: string): string[];
  /** The clients it adopts, as the message refusing an unknown target names them. */
  readonly clients: readonly string[];
  /** The URL schemes whose pool takes `option` (named when another engine's URL is given it). */
  optionSchemes?(option: PoolOption): readonly string[];
  /** The client `target` is, recognised by shape (the app may load its own copy of the driver). */
  classifyClient(target: object): C | undefined;
  /** How a client passed in is named in messages (never its password). */
  describeClient(target: C): string;
  where(location: L): StorePlace;
  /** The pool options a URL of this engine takes (or quietly ignores, as it always did). */
  urlOptions(location: L): readonly PoolOption[];
  /** How the app sets `option` on a client of this engine it creates, for the message refusing it here. */
  clientOptionHint?(client: C, option: PoolOption): string | undefined;
  /** `mustExist`, before anything is opened: refuse a location that opening would create. */
  assertLocationExists(location: L): void;
  /** Refuse an option that makes no sense for this engine (before anything is opened). */
  refuseOptions(options: OpenStoreOptions, request: OpenRequest<L, C>): void;
  open(request: OpenRequest<L, C>, options: ParsedOpenOptions, clock: () => number): Promise<OpenedStore>;
  /** Its driver's error codes for a violated constraint (through Drizzle's wrapper, see db/constraint.ts). */
  readonly constraintCodes: Readonly<Record<string, 'foreign-key' | 'unique'>>;
  /** Why push removed the search structures: what the app's schema does not declare on this engine. */
  readonly searchStructuresPushDrops: string;
  /** The contract fixture's SQL on this engine (src/testing), loaded only there. */
  testing(): Promise<EngineTesting>;
}

/** What the shared contract fixture needs from an engine. */
export interface EngineTesting {
  /** Run setup SQL on the store. */
  exec(store: AnySessionStore, text: string): Promise<void>;
  /** Empty every table of `tables`; message ids start from 1 again. */
  empty(store: AnySessionStore, tables: readonly string[]): Promise<void>;
  /** SQL that makes a message INSERT of content 'BOOM' fail, and removes that again. */
  readonly failingInsert: { install: string[]; remove: string[] };
}
