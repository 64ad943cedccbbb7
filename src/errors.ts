/**
 * Typed errors. Every error this library throws is a `SessionDbError` with a stable `code`, so callers can
 * branch on `code` (or `instanceof`) instead of parsing messages. Messages never contain passwords.
 */

export type SessionDbErrorCode =
  | 'VALIDATION'
  | 'INVALID_URL'
  | 'CONNECTION'
  | 'MIGRATION'
  | 'STORE_BUSY'
  | 'STORE_CLOSED'
  | 'SESSION_NOT_FOUND'
  | 'TITLE_CONFLICT'
  | 'TOPIC_ALREADY_LINKED'
  | 'UNSUPPORTED_LOCALE'
  | 'DATABASE';

export class SessionDbError extends Error {
  readonly code: SessionDbErrorCode;
  constructor(code: SessionDbErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
    this.name = new.target.name;
  }
}

/** A public input failed validation; nothing was written. `field` names the offending input. */
export class ValidationError extends SessionDbError {
  readonly field: string;
  constructor(field: string, message: string, options?: { cause?: unknown }) {
    super('VALIDATION', `Invalid ${field}: ${message}`, options);
    this.field = field;
  }
}

/** A store URL that no backend understands. */
export class InvalidUrlError extends SessionDbError {
  readonly url: string;
  constructor(redactedUrl: string, reason: string) {
    super('INVALID_URL', `Invalid store URL ${JSON.stringify(redactedUrl)}: ${reason}`);
    this.url = redactedUrl;
  }
}

/**
 * The database could not be opened or reached, or (`lost`) the connection a call was using closed before the
 * call sent its next statement: nothing more was sent on it. `url` is the store URL with any password redacted.
 */
export class ConnectionError extends SessionDbError {
  readonly url: string;
  constructor(redactedUrl: string, reason: string, options?: { cause?: unknown; lost?: boolean }) {
    super(
      'CONNECTION',
      `${options?.lost ? 'Lost the connection to' : 'Cannot open'} ${redactedUrl}: ${reason}`,
      options,
    );
    this.url = redactedUrl;
  }
}

/** Why a StoreNotFoundError: nothing is there, or something is there that holds no store. */
export type StoreNotFoundReason =
  /** No such SQLite file or PGlite data directory, or an in-memory database (always new). */
  | 'MISSING'
  /** A PGlite directory holding no database, or a Postgres database without hermes-sessiondb's migration history. */
  | 'NO_STORE';

/**
 * `openStore(url, { mustExist: true })` found no store to open; nothing was created. A ConnectionError (code
 * 'CONNECTION'), so handlers of a failed open still catch it; `location` is the missing file or directory as
 * resolved, or the redacted URL of a database that holds no store.
 */
export class StoreNotFoundError extends ConnectionError {
  readonly reason: StoreNotFoundReason;
  readonly location: string;
  constructor(redactedUrl: string, reason: StoreNotFoundReason, location: string, detail: string) {
    super(redactedUrl, detail);
    this.reason = reason;
    this.location = location;
  }
}

export type MigrationErrorReason =
  /** The database records migrations this version of hermes-sessiondb does not ship (it is newer). */
  | 'UNKNOWN_MIGRATIONS'
  /** After migrating, a local migration is still not recorded (it would have been silently skipped). */
  | 'NOT_APPLIED'
  /** The database already has our tables but no migration history: a Hermes state.db or another app's. */
  | 'FOREIGN_DATABASE'
  /** A migration left rows that violate a foreign key; it was rolled back. */
  | 'FOREIGN_KEY_VIOLATION'
  /** The migration files themselves are unreadable or inconsistent. */
  | 'BAD_MIGRATION_FILES'
  /**
   * A statement of a migration failed. SQLite and Postgres rolled the whole run back; on MySQL/MariaDB (no
   * transactional DDL) the statements before it stay, recorded, and the next run resumes at the failed one.
   */
  | 'STATEMENT_FAILED'
  /** Every migration is recorded, but search tables, columns, indexes or triggers are gone (drizzle-kit push). */
  | 'MISSING_SEARCH_STRUCTURES'
  /**
   * A migration dropped triggers without naming them in a DROP TRIGGER (SQLite: a table rebuild drops the
   * table's triggers with it); it was rolled back. The migration must create them again.
   */
  | 'TRIGGERS_LOST'
  /**
   * The store's recorded migrations stop before the one its search reads (an older store opened with
   * `migrate: false`, or a migrations folder of an older version): search refuses until it is migrated.
   */
  | 'SEARCH_NEEDS_MIGRATION';

export class MigrationError extends SessionDbError {
  readonly reason: MigrationErrorReason;
  constructor(reason: MigrationErrorReason, message: string, options?: { cause?: unknown }) {
    super('MIGRATION', message, options);
    this.reason = reason;
  }
}

/**
 * A Postgres database whose LC_CTYPE does not classify non-ASCII letters (LC_CTYPE 'C'). No longer thrown:
 * search tokenizes in the library (migration 0010), so such a database answers as any other. Kept exported so
 * code that catches it still compiles.
 */
export class UnsupportedLocaleError extends SessionDbError {
  readonly ctype: string;
  constructor(ctype: string, message: string) {
    super('UNSUPPORTED_LOCALE', message);
    this.ctype = ctype;
  }
}

/** SQLite stayed locked by other writers for longer than the configured write deadline. */
export class StoreBusyError extends SessionDbError {
  readonly waitedMs: number;
  constructor(waitedMs: number, options?: { cause?: unknown }) {
    super('STORE_BUSY', `Database is still locked by another writer after ${waitedMs} ms`, options);
    this.waitedMs = waitedMs;
  }
}

/** A call on a store after `close()`. */
export class StoreClosedError extends SessionDbError {
  constructor() {
    super('STORE_CLOSED', 'The store is closed');
  }
}

/** A title longer than 100 code points (after sanitising). A ValidationError on the field `title`. */
export class TitleTooLongError extends ValidationError {
  readonly length: number;
  constructor(length: number, max: number) {
    super('title', `Title too long (${length} chars, max ${max})`);
    this.length = length;
    // Hermes' ValueError text, so messages read the same on both sides.
    this.message = `Title too long (${length} chars, max ${max})`;
  }
}

/** A write needs a session that does not exist (append, bind, or a parent id). Nothing was written. */
export class SessionNotFoundError extends SessionDbError {
  readonly sessionId: string;
  constructor(sessionId: string, role = 'session') {
    super('SESSION_NOT_FOUND', `Unknown ${role} ${JSON.stringify(sessionId)}`);
    this.sessionId = sessionId;
  }
}

/** Another session already has this exact title. The message is Hermes' own. */
export class TitleConflictError extends SessionDbError {
  readonly title: string;
  readonly conflictingSessionId: string;
  constructor(title: string, conflictingSessionId: string) {
    super('TITLE_CONFLICT', `Title '${title}' is already in use by session ${conflictingSessionId}`);
    this.title = title;
    this.conflictingSessionId = conflictingSessionId;
  }
}

/** The session is already bound to a different Telegram topic. The message is Hermes' own. */
export class TopicAlreadyLinkedError extends SessionDbError {
  readonly sessionId: string;
  constructor(sessionId: string) {
    super('TOPIC_ALREADY_LINKED', 'session is already linked to another Telegram topic');
    this.sessionId = sessionId;
  }
}

/**
 * The database or driver failed a statement for a reason no other error names: a dropped connection, a
 * server shutting down, a full disk, a corrupt file. The transaction was rolled back, so nothing of the
 * call was written. `driverCode` is the driver's code (a Postgres SQLSTATE such as 57P01, or an SQLite
 * code such as SQLITE_IOERR); `cause` is the driver's error.
 */
export class DatabaseError extends SessionDbError {
  readonly driverCode: string | null;
  constructor(message: string, driverCode: string | null, options?: { cause?: unknown }) {
    super('DATABASE', driverCode ? `${message} (${driverCode})` : message, options);
    this.driverCode = driverCode;
  }

  /** Wrap a driver error (our own errors pass through unchanged). */
  static from(error: unknown): SessionDbError {
    if (error instanceof SessionDbError) return error;
    let driverCode: string | null = null;
    let message = error instanceof Error ? error.message : String(error);
    // Drizzle wraps driver errors ("Failed query: …" with the SQL); the driver's own words are in `cause`.
    for (let e: unknown = error, depth = 0; e && typeof e === 'object' && depth < 5; depth++) {
      const code = (e as { code?: unknown }).code;
      if (driverCode === null && typeof code === 'string' && code !== '') driverCode = code;
      const cause = (e as { cause?: unknown }).cause;
      if (!cause) {
        if (e instanceof Error) message = e.message;
        break;
      }
      e = cause;
    }
    return new DatabaseError(message, driverCode, { cause: error });
  }
}

/** For `.catch()` at the dialect boundary: rethrow a driver error as a DatabaseError (ours unchanged). */
export function rethrowAsDatabaseError(error: unknown): never {
  throw DatabaseError.from(error);
}
