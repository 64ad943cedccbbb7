/**
 * The engine registry: every engine this package opens, one line each. The only shared file that names them;
 * a new engine is a folder under src/db/ (its descriptor in engine.ts), a schema file, its migrations and a
 * line here. Light to import: each descriptor loads its driver when a store is opened.
 */
import type { EngineDescriptor } from './engine.js';
import type { MysqlBackend } from './mysql/backend.js';
import { mysqlEngine } from './mysql/engine.js';
import type { PgBackend } from './pg/backend.js';
import { pgEngine } from './pg/engine.js';
import type { SqliteBackend } from './sqlite/backend.js';
import { sqliteEngine } from './sqlite/engine.js';

/** In the order URL schemes are listed in messages; the one with parseBarePath reads a URL without a scheme. */
export const ENGINES = [sqliteEngine, pgEngine, mysqlEngine] as const;

/** The backend class behind each dialect name (`store.backend` narrows with `store.dialect`). */
export interface EngineBackends {
  sqlite: SqliteBackend;
  pg: PgBackend;
  mysql: MysqlBackend;
}

type Engine = (typeof ENGINES)[number];

/** An engine family's name: `store.dialect`, a migrations folder under `drizzle/`. */
export type DialectName = Engine['name'];
/** Every engine family this package ships migrations for. */
export const DIALECT_NAMES = ENGINES.map((e) => e.name) as [DialectName, ...DialectName[]];
type LocationOf<E> = E extends EngineDescriptor<infer _N, infer L, infer _C> ? L : never;
type ClientOf<E> = E extends EngineDescriptor<infer _N, infer _L, infer C> ? C : never;

/** Where a store URL points: which engine reads it, and its parts. */
export type StoreLocation = LocationOf<Engine>;
/** A client the app passed in, by kind. */
export type ClientTarget = ClientOf<Engine>;
/** A store URL, or an open client: a postgres.js `Sql`, a PGlite instance, a better-sqlite3 `Database`. */
export type StoreTarget = string | ClientTarget['client'];

/** An engine as the shared code sees one: its location and client types are the unions of all engines'. */
export type AnyEngine = EngineDescriptor<Engine['name'], StoreLocation, ClientTarget>;

/** Every engine, as the shared code sees them. */
export const engines = ENGINES as unknown as readonly AnyEngine[];
