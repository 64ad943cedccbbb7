/**
 * hermes-sessiondb: the Hermes SessionDB contract on SQLite and PostgreSQL.
 */
export { openStore, openStoreOptionsSchema, type OpenStoreOptions } from './open.js';
export type { StoreTarget } from './db/targets.js';
export type { PostgresClient, PgliteClient } from './db/pg/engine.js';
export { postgresSessionSettings } from './db/pg/open.js';
export {
  SessionStore,
  sanitizeTitle,
  type AnySessionStore,
  type BackendOf,
  type CreateSessionOptions,
  type UpdateTokenCountsOptions,
  type PruneSessionsOptions,
  type AutoMaintenanceOptions,
  type AppendMessageOptions,
  type ReplacementMessageInput,
  type AppendMessagesInput,
  type ConversationOptions,
  type MessagesAroundOptions,
  type AnchoredViewOptions,
  type ListSessionsRichOptions,
  type EnableTelegramTopicModeOptions,
  type DisableTelegramTopicModeOptions,
  type TelegramTopicModeQuery,
  type TelegramTopicBindingQuery,
  type BindTelegramTopicOptions,
  type UnlinkedTelegramSessionsQuery,
  type SearchMessagesOptions,
  type SearchSessionsOptions,
} from './store.js';
export {
  SearchRepo,
  planSearch,
  MAX_QUERY_CHARS,
  type SearchHit,
  type SearchContextEntry,
  type SessionWithActivity,
} from './repos/search.js';
export { sanitizeFts5Query } from './search/sanitize.js';
export { parseQuery, type QueryNode, type Phrase, type ParsedQuery } from './search/query.js';
export type {
  SessionRow,
  MessageRow,
  RichSessionRow,
  ConversationMessage,
  MessagesAround,
  AnchoredView,
  HandoffState,
  TelegramTopicBinding,
  SessionExport,
  SessionExportWithActivity,
  AutoMaintenanceResult,
  JsonValue,
  JsonInput,
  MessageContent,
  MessageContentInput,
  SearchSort,
  HandoffStatus,
  KnownRole,
  HermesRole,
  TelegramManagedMode,
  OpenUnion,
} from './types.js';
export {
  decodeSqliteSessionRow,
  decodeSqliteMessageRow,
  decodeSqliteTelegramBindingRow,
  type SqliteSessionsSelect,
  type SqliteMessagesSelect,
  type SqliteTopicBindingsSelect,
} from './db/sqlite/rows.js';
export {
  decodePgSessionRow,
  decodePgMessageRow,
  decodePgTelegramBindingRow,
  type PgSessionsSelect,
  type PgMessagesSelect,
  type PgTopicBindingsSelect,
} from './db/pg/rows.js';
export { SessionRepo } from './repos/sessions.js';
export { MessageRepo } from './repos/messages.js';
export { TitleRepo, MAX_TITLE_LENGTH } from './repos/titles.js';
export { LineageRepo } from './repos/lineage.js';
export { HandoffRepo } from './repos/handoffs.js';
export { TelegramTopicRepo } from './repos/telegram-topics.js';
export { MetaRepo } from './repos/meta.js';
export { ExportRepo, MaintenanceRepo, type StoreStats, type UsageGroup } from './repos/maintenance.js';
export {
  hermesExport,
  hermesSession,
  hermesMessage,
  writeHermesExport,
  type HermesExportOptions,
  type HermesExportCounts,
} from './codecs/hermes-export.js';
export type { Backend, DriverName } from './db/backend.js';
export { SqliteBackend, type SqliteDb, type SqliteSchema } from './db/sqlite/backend.js';
export { PgBackend } from './db/pg/backend.js';
export { MysqlBackend } from './db/mysql/backend.js';
export type { PgDb, PgSchema } from './db/pg/open.js';
export type { Dialect, DialectName, MigrationReport, MigrationStatus } from './db/migrations.js';
export { migrationsFolder } from './migrations-folder.js';
export type { SchemaInfo, ColumnInfo, IndexInfo, ForeignKeyInfo } from './db/introspect.js';
export { parseStoreUrl, redactUrl, type StoreLocation } from './db/url.js';
export {
  SessionDbError,
  ValidationError,
  UnsupportedLocaleError,
  InvalidUrlError,
  ConnectionError,
  StoreNotFoundError,
  MigrationError,
  StoreBusyError,
  StoreClosedError,
  SessionNotFoundError,
  TitleConflictError,
  TitleTooLongError,
  TopicAlreadyLinkedError,
  DatabaseError,
  type SessionDbErrorCode,
  type MigrationErrorReason,
  type StoreNotFoundReason,
} from './errors.js';
export { nowEpochSeconds, roundToMicros } from './codecs/time.js';
export * as sqliteSchema from './schema/sqlite.js';
export * as pgSchema from './schema/pg.js';
export { hermesPgTables, type HermesPgTables } from './schema/pg.js';
export {
  importHermesStateDb,
  ImportError,
  type ImportReport,
  type ImportProgress,
  type ImportOptions,
  type UnknownColumn,
  type UnknownTable,
} from './transfer/hermes-import.js';
export { copyStore, type CopyReport, type CopyOptions } from './transfer/copy.js';
export {
  transferRows,
  TransferRefusedError,
  type TransferOptions,
  type TransferProgress,
  type TransferCounts,
} from './transfer/pipeline.js';
export { HermesFileSource, storeSource, type RowSource } from './transfer/sources.js';
export { BulkReadRepo } from './repos/bulk-read.js';
export { ImportRepo, type TransferTable } from './repos/import.js';
export type { BulkLimits, UnfitValue } from './db/bulk-fit.js';
export {
  verifyStores,
  verifyTransfer,
  messagesDigest,
  type VerifyReport,
  type VerifyOptions,
} from './transfer/verify.js';
