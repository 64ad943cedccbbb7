/**
 * What a backend gives the contract suite: fresh stores, and the capabilities it lacks, each with its reason
 * (Drizzle's integration tests keep their skip lists the same way). The tests that need a missing capability
 * are skipped, and the reason is printed in their name.
 */
import type { OpenStoreOptions, SessionStore } from '../index.js';

/**
 * - `reopen`: close a store and open the same database again (an in-memory database cannot).
 * - `multi-process`: two stores (or two processes) share one database at once.
 * - `failing-insert`: make an INSERT of one message fail on purpose (a trigger), to prove a failed call
 *   writes nothing. Built in for SQLite and Postgres; other backends give `failingInsert`.
 * - `search`: searchMessages and searchSessions answer as Hermes' FTS5 search does. Every SessionDBProvider
 *   must: skipping it is for a backend under construction, and the report says so next to each skipped test.
 */
export type ContractCapability = 'reopen' | 'multi-process' | 'failing-insert' | 'search';

/** SQL that makes inserting a message whose content is 'BOOM' fail, and SQL that undoes it. */
export interface FailingInsertSql {
  install: string[];
  remove: string[];
}

export interface ContractHarness {
  /** Shown in every test's name: `contract [name]`. */
  readonly name: string;
  /** Capabilities this backend lacks, each with the reason (shown next to the skipped tests). */
  readonly skips?: Partial<Record<ContractCapability, string>>;
  /** When set, the backend is not reachable here: the suite is skipped with this reason, or fails if `required`. */
  readonly unavailable?: string;
  /** An unavailable backend fails the run instead of skipping it (CI, where the server must be up). */
  readonly required?: boolean;
  /** A fresh, empty, migrated store. */
  open(options?: OpenStoreOptions): Promise<SessionStore>;
  /** The URL of a fresh, empty database (for the tests that open one database twice or reopen it). */
  freshUrl(): Promise<string>;
  /** Open the store at a URL from `freshUrl`, with the harness's own options, then `options`. */
  openAt(url: string, options?: OpenStoreOptions): Promise<SessionStore>;
  /**
   * Run one setup statement, written in plain SQL that every dialect reads (unquoted names). Tests use it
   * only for states the API deliberately cannot make (a 2^31 counter, a message moved between sessions).
   * Built in for SQLite and Postgres stores.
   */
  exec?(store: SessionStore, statement: string): Promise<void>;
  /** Empty every table of a store between tests (ids restart). Built in for SQLite and Postgres stores. */
  empty?(store: SessionStore): Promise<void>;
  /** See `failing-insert`. Built in for SQLite and Postgres stores. */
  failingInsert?: FailingInsertSql;
  /** Drop everything the harness created. The harness stays usable afterwards. */
  cleanup(): Promise<void>;
}
