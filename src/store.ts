/**
 * `SessionStore`: the RFC's SessionDBProvider contract as async camelCase methods (Python keyword
 * arguments become an options object), over repositories that are reachable directly as well
 * (`store.sessions`, `store.messages`, …). Every public input is validated here, before any database work.
 */
// size: the facade is one short delegating method, with its doc, per method of the contract.
import type { MessageContentInput } from './codecs/content.js';
import { constraintViolation } from './db/constraint.js';
import { CallGate, trackedRepository } from './db/ops.js';
import type { Dialect, Runner } from './db/dialect.js';
import type { SchemaInfo } from './db/introspect.js';
import type { DialectName, MigrationReport, MigrationStatus } from './db/migrations.js';
import type { EngineBackends } from './db/engines.js';
import {
  SessionDbError,
  SessionNotFoundError,
  StoreClosedError,
  TitleConflictError,
  TopicAlreadyLinkedError,
} from './errors.js';
import type { RepoContext } from './repos/context.js';
import { HandoffRepo } from './repos/handoffs.js';
import { BulkReadRepo } from './repos/bulk-read.js';
import { ImportRepo } from './repos/import.js';
import { LineageRepo } from './repos/lineage.js';
import { ExportRepo, MaintenanceRepo } from './repos/maintenance.js';
import { MessageRepo } from './repos/messages.js';
import { MetaRepo } from './repos/meta.js';
import { type SearchHit, SearchRepo, type SessionWithActivity } from './repos/search.js';
import { SessionRepo } from './repos/sessions.js';
import { TelegramTopicRepo } from './repos/telegram-topics.js';
import { TitleRepo, sanitizeTitle } from './repos/titles.js';
import type {
  AnchoredView,
  AutoMaintenanceResult,
  ConversationMessage,
  HandoffState,
  HermesRole,
  MessageRow,
  MessagesAround,
  RichSessionRow,
  SessionExport,
  SessionExportWithActivity,
  SessionRow,
  TelegramTopicBinding,
} from './types.js';
import * as v from './validation.js';

type Input<K extends keyof typeof v> = (typeof v)[K] extends import('zod').ZodType
  ? import('zod').input<(typeof v)[K]>
  : never;

export type CreateSessionOptions = Input<'createSessionOptions'>;
export type UpdateTokenCountsOptions = Input<'updateTokenCountsOptions'>;
export type PruneSessionsOptions = Input<'pruneOptions'>;
export type AutoMaintenanceOptions = Input<'autoMaintenanceOptions'>;
export type AppendMessageOptions = Input<'appendMessageOptions'>;
export type ReplacementMessageInput = Record<string, unknown>;
export type AppendMessagesInput = Input<'appendMessagesInput'>;
export type ConversationOptions = Input<'conversationOptions'>;
export type MessagesAroundOptions = Input<'aroundOptions'>;
export type AnchoredViewOptions = Input<'anchoredViewOptions'>;
export type ListSessionsRichOptions = Input<'listSessionsRichOptions'>;
export type EnableTelegramTopicModeOptions = Input<'enableTopicModeOptions'>;
export type DisableTelegramTopicModeOptions = Input<'disableTopicModeOptions'>;
export type TelegramTopicModeQuery = Input<'topicModeQuery'>;
export type TelegramTopicBindingQuery = Input<'topicBindingQuery'>;
export type BindTelegramTopicOptions = Input<'bindTopicOptions'>;
export type UnlinkedTelegramSessionsQuery = Input<'unlinkedQuery'>;
export type SearchMessagesOptions = Input<'searchMessagesOptions'>;
export type SearchSessionsOptions = Input<'searchSessionsOptions'>;

export { sanitizeTitle };

/** The backend behind a store of dialect D: SqliteBackend for 'sqlite', PgBackend for 'pg', MysqlBackend for 'mysql'. */
export type BackendOf<D extends DialectName> = EngineBackends[D];

/**
 * What openStore returns: a store whose `backend` narrows with its `dialect`
 * (`if (store.dialect === 'sqlite') store.backend.client`). `SessionStore` (no argument) is the wider type
 * both are assignable to.
 */
export type AnySessionStore = { [D in DialectName]: SessionStore<D> }[DialectName];

export class SessionStore<D extends DialectName = DialectName> {
  /** The store URL with any password redacted. */
  readonly url: string;
  readonly sessions: SessionRepo;
  readonly messages: MessageRepo;
  readonly titles: TitleRepo;
  readonly lineage: LineageRepo;
  readonly handoffs: HandoffRepo;
  readonly telegramTopics: TelegramTopicRepo;
  readonly meta: MetaRepo;
  readonly exports: ExportRepo;
  readonly maintenance: MaintenanceRepo;
  readonly search: SearchRepo;
  /** Bulk writes that keep ids and timestamps (used by importHermesStateDb). */
  readonly imports: ImportRepo;
  /** Bulk reads in Hermes' stored form (used by copyStore and verify). */
  readonly bulkRead: BulkReadRepo;
  /** The repositories themselves, for the facade (its calls are already tracked). */
  private readonly repos: {
    sessions: SessionRepo;
    messages: MessageRepo;
    titles: TitleRepo;
    lineage: LineageRepo;
    handoffs: HandoffRepo;
    telegramTopics: TelegramTopicRepo;
    meta: MetaRepo;
    exports: ExportRepo;
    maintenance: MaintenanceRepo;
    search: SearchRepo;
    imports: ImportRepo;
    bulkRead: BulkReadRepo;
  };
  private readonly backendImpl: BackendOf<D>;
  private readonly runner: Runner;
  /** Public calls in flight: close() lets them settle and refuses new ones. */
  private readonly calls = new CallGate();
  private closing: Promise<void> | undefined;

  constructor(backend: BackendOf<D>, dialect: Dialect, clock: () => number, searchRankWindow?: number) {
    this.backendImpl = backend;
    this.runner = dialect.runner;
    this.url = backend.url;
    const ctx: RepoContext = { d: dialect.spelling, run: dialect.runner, now: clock };
    const lineage = new LineageRepo(ctx);
    const sessions = new SessionRepo(ctx, lineage);
    const messages = new MessageRepo(ctx);
    const meta = new MetaRepo(ctx);
    this.repos = {
      sessions,
      messages,
      titles: new TitleRepo(ctx),
      lineage,
      handoffs: new HandoffRepo(ctx),
      telegramTopics: new TelegramTopicRepo(ctx),
      meta,
      exports: new ExportRepo(ctx, messages),
      maintenance: new MaintenanceRepo(ctx, sessions, meta),
      search: new SearchRepo(ctx, searchRankWindow),
      imports: new ImportRepo(ctx),
      bulkRead: new BulkReadRepo(ctx),
    };
    // The public repositories are the same objects seen through the call gate: close() waits for a call made
    // on them too. The facade and the repositories themselves use the unwrapped ones.
    const tracked = <R extends object>(repo: R): R => trackedRepository(repo, this.calls);
    this.sessions = tracked(sessions);
    this.messages = tracked(messages);
    this.titles = tracked(this.repos.titles);
    this.lineage = tracked(lineage);
    this.handoffs = tracked(this.repos.handoffs);
    this.telegramTopics = tracked(this.repos.telegramTopics);
    this.meta = tracked(meta);
    this.exports = tracked(this.repos.exports);
    this.maintenance = tracked(this.repos.maintenance);
    this.search = tracked(this.repos.search);
    this.imports = tracked(this.repos.imports);
    this.bulkRead = tracked(this.repos.bulkRead);
  }

  /** The dialect behind this store: 'sqlite', 'pg' or 'mysql'. Checking it narrows `backend`. */
  get dialect(): D {
    return this.backendImpl.dialect as D;
  }

  /** The backend: its Drizzle instance (`backend.db`) and, on SQLite, the raw connection (`backend.client`). */
  get backend(): BackendOf<D> {
    this.assertOpen();
    return this.backendImpl;
  }

  // ── Lifecycle and schema ──

  async migrate(): Promise<MigrationReport> {
    return this.track(async () => {
      const report = await this.backendImpl.migrate();
      // Migrations applied to a store that had rows may have backfilled whole tables: fresh planner statistics.
      if (report.applied.length > 0 && report.alreadyApplied > 0) await this.runner.analyze();
      return report;
    });
  }

  async migrationStatus(): Promise<MigrationStatus> {
    return this.track(() => this.backendImpl.migrationStatus());
  }

  async introspect(): Promise<SchemaInfo> {
    return this.track(() => this.backendImpl.introspect());
  }

  /**
   * Close the store. Every call already made settles first (it commits and resolves, or fails as it would
   * have anyway); calls made once closing has begun reject with StoreClosedError. Then the connection
   * closes (SQLite: the WAL is checkpointed first). A second call returns the first one's promise.
   */
  async close(): Promise<void> {
    this.closing ??= this.shutDown();
    return this.closing;
  }

  private async shutDown(): Promise<void> {
    await this.calls.shutAndDrain();
    await this.runner.settle(); // operations started through the repositories directly
    await this.runner.close();
    await this.backendImpl.close();
  }

  // ── Sessions ──

  /** Create a session unless the id exists (first write wins). Returns the id. */
  async createSession(sessionId: string, source: string, options: CreateSessionOptions = {}): Promise<string> {
    // The repository validates (once, for both ways in).
    return this.track(() =>
      this.guard(
        () => this.repos.sessions.create(sessionId, source, options),
        () => ({ parent: options.parentSessionId }),
      ),
    );
  }

  /** Like createSession with source 'unknown' by default: recover a session whose creation failed. */
  async ensureSession(
    sessionId: string,
    source: string = 'unknown',
    options: CreateSessionOptions = {},
  ): Promise<string> {
    return this.createSession(sessionId, source, options);
  }

  async getSession(sessionId: string): Promise<SessionRow | null> {
    return this.track(() => this.repos.sessions.get(v.validate(v.lookupId, sessionId, 'sessionId')));
  }

  /** An exact id, or the single session whose id starts with the prefix; otherwise null. */
  async resolveSessionId(idOrPrefix: string): Promise<string | null> {
    return this.track(() => this.repos.sessions.resolveId(v.validate(v.lookupId, idOrPrefix, 'idOrPrefix')));
  }

  /** End a live session (a second end changes nothing). */
  async endSession(sessionId: string, endReason: string): Promise<void> {
    await this.track(() => this.repos.sessions.end(sessionId, endReason));
  }

  async reopenSession(sessionId: string): Promise<void> {
    await this.track(() => this.repos.sessions.reopen(sessionId));
  }

  async updateSystemPrompt(sessionId: string, systemPrompt: string | null): Promise<void> {
    await this.track(() => this.repos.sessions.updateSystemPrompt(sessionId, systemPrompt));
  }

  /** Add per-call deltas, or with `absolute: true` set gateway totals (Hermes' COALESCE rules). */
  async updateTokenCounts(sessionId: string, options: UpdateTokenCountsOptions = {}): Promise<void> {
    return this.track(() => this.repos.sessions.updateTokenCounts(sessionId, options));
  }

  /** Delete a session and its messages; its children become roots. False when it did not exist. */
  async deleteSession(sessionId: string): Promise<boolean> {
    return this.track(() => this.repos.sessions.delete(sessionId));
  }

  /** Delete a session's messages and zero its message and tool-call counters. */
  async clearMessages(sessionId: string): Promise<void> {
    await this.track(() => this.repos.sessions.clearMessages(sessionId));
  }

  /** Delete ended sessions older than `olderThanDays` (default 90); returns how many. */
  async pruneSessions(options: PruneSessionsOptions = {}): Promise<number> {
    return this.track(async () => {
      const o = v.validate(v.pruneOptions, options, 'options');
      return this.repos.sessions.prune(o.olderThanDays, o.source);
    });
  }

  async vacuum(): Promise<void> {
    await this.track(() => this.repos.maintenance.vacuum());
  }

  /** Prune and vacuum at most once per interval; failures are reported in `error`, not thrown. */
  async maybeAutoPruneAndVacuum(options: AutoMaintenanceOptions = {}): Promise<AutoMaintenanceResult> {
    return this.track(() => this.repos.maintenance.maybeAutoPruneAndVacuum(options));
  }

  async sessionCount(options: { source?: string | null } = {}): Promise<number> {
    return this.track(() => this.repos.sessions.count(v.validate(v.sourceFilterOptions, options, 'options').source));
  }

  async messageCount(options: { sessionId?: string | null } = {}): Promise<number> {
    return this.track(() =>
      this.repos.messages.count(v.validate(v.sessionFilterOptions, options, 'options').sessionId),
    );
  }

  /** Sessions for a picker: roots and branches, newest first, with preview and last activity. */
  async listSessionsRich(options: ListSessionsRichOptions = {}): Promise<RichSessionRow[]> {
    return this.track(() => this.repos.sessions.listRich(v.validate(v.listSessionsRichOptions, options, 'options')));
  }

  // ── Titles ──

  /** Set or (with '' or null) clear a title. True when the session exists. */
  async setSessionTitle(sessionId: string, title: string | null): Promise<boolean> {
    return this.track(() =>
      this.guard(
        () => this.repos.titles.set(sessionId, title),
        () => ({ title, sessionId }),
      ),
    );
  }

  async getSessionTitle(sessionId: string): Promise<string | null> {
    return this.track(() => this.repos.titles.get(v.validate(v.lookupId, sessionId, 'sessionId')));
  }

  async getSessionByTitle(title: string): Promise<SessionRow | null> {
    return this.track(() => this.repos.titles.getSessionByTitle(v.validate(v.text, title, 'title')));
  }

  /** The newest "<title> #N" session, else the exact title's session, else null. */
  async resolveSessionByTitle(title: string): Promise<string | null> {
    return this.track(() => this.repos.titles.resolve(v.validate(v.text, title, 'title')));
  }

  /** The next free title in a lineage: "x", then "x #2", "x #3", … */
  async getNextTitleInLineage(baseTitle: string): Promise<string> {
    return this.track(() => this.repos.titles.nextInLineage(v.validate(v.text, baseTitle, 'baseTitle')));
  }

  // ── Messages ──

  /** Append a message and bump the session's counters. Returns the message id. */
  async appendMessage(
    sessionId: string,
    role: HermesRole,
    content?: MessageContentInput | null,
    options: AppendMessageOptions = {},
  ): Promise<number> {
    return this.track(() =>
      this.guard(
        () => this.repos.messages.append(sessionId, role, content, options),
        () => ({ session: sessionId }),
      ),
    );
  }

  /**
   * Append several messages to one session in one transaction, with one commit: the batch form of
   * appendMessage for callers that have a turn's messages at hand. Returns the new ids in order.
   */
  async appendMessages(sessionId: string, messages: AppendMessagesInput): Promise<number[]> {
    return this.track(() =>
      this.guard(
        () => this.repos.messages.appendMany(sessionId, messages),
        () => ({ session: sessionId }),
      ),
    );
  }

  /** Replace the whole transcript atomically: on any failure the previous one survives. */
  async replaceMessages(sessionId: string, messages: ReplacementMessageInput[]): Promise<void> {
    return this.track(() =>
      this.guard(
        () => this.repos.messages.replace(sessionId, messages),
        () => ({ session: sessionId }),
      ),
    );
  }

  async getMessages(sessionId: string): Promise<MessageRow[]> {
    return this.track(() => this.repos.messages.list(v.validate(v.lookupId, sessionId, 'sessionId')));
  }

  /** OpenAI-format messages to replay; `includeAncestors` prepends the parent chain. */
  async getMessagesAsConversation(
    sessionId: string,
    options: ConversationOptions = {},
  ): Promise<ConversationMessage[]> {
    return this.track(async () => {
      const id = v.validate(v.lookupId, sessionId, 'sessionId');
      return this.repos.messages.conversation(
        id,
        v.validate(v.conversationOptions, options, 'options').includeAncestors,
      );
    });
  }

  /** The anchor message and up to `window` (default 5) messages on each side. */
  async getMessagesAround(
    sessionId: string,
    anchorId: number,
    options: MessagesAroundOptions = {},
  ): Promise<MessagesAround> {
    return this.track(async () => {
      const id = v.validate(v.lookupId, sessionId, 'sessionId');
      const anchor = v.validate(v.messageId, anchorId, 'anchorId');
      return this.repos.messages.around(id, anchor, v.validate(v.aroundOptions, options, 'options').window);
    });
  }

  /** The window around an anchor filtered to `keepRoles`, with bookends from the session's start and end. */
  async getAnchoredView(sessionId: string, anchorId: number, options: AnchoredViewOptions = {}): Promise<AnchoredView> {
    return this.track(async () => {
      const id = v.validate(v.lookupId, sessionId, 'sessionId');
      const anchor = v.validate(v.messageId, anchorId, 'anchorId');
      const o = v.validate(v.anchoredViewOptions, options, 'options');
      return this.repos.messages.anchoredView(id, anchor, o.window, o.bookend, o.keepRoles);
    });
  }

  // ── Lineage ──

  /** The last compression continuation of a session's chain (the session itself when uncompressed). */
  async getCompressionTip(sessionId: string): Promise<string> {
    return this.track(() => this.repos.lineage.getCompressionTip(v.validate(v.lookupId, sessionId, 'sessionId')));
  }

  /** Where to resume: the session if it has messages, else the first descendant that has. */
  async resolveResumeSessionId<T extends string | null | undefined>(sessionId: T): Promise<T | string> {
    return this.track(async () => {
      if (sessionId === null || sessionId === undefined) return sessionId;
      return this.repos.lineage.resolveResumeSessionId(v.validate(v.lookupId, sessionId, 'sessionId') as T);
    });
  }

  /** Session ids from the root of the parent chain down to `sessionId` (inclusive). */
  async getLineage(sessionId: string): Promise<string[]> {
    return this.track(() => this.repos.lineage.getLineage(v.validate(v.lookupId, sessionId, 'sessionId')));
  }

  /** Every session below `sessionId` (children of any kind, recursively), oldest first. */
  async getDescendants(sessionId: string): Promise<string[]> {
    return this.track(() => this.repos.lineage.getDescendants(v.validate(v.lookupId, sessionId, 'sessionId')));
  }

  // ── Meta ──

  async getMeta(key: string): Promise<string | null> {
    return this.track(() => this.repos.meta.get(v.validate(v.metaKey, key, 'key')));
  }

  async setMeta(key: string, value: string | null): Promise<void> {
    await this.track(() => this.repos.meta.set(key, value));
  }

  // ── Handoffs ──

  async requestHandoff(sessionId: string, platform: string): Promise<boolean> {
    return this.track(() => this.repos.handoffs.request(sessionId, platform));
  }

  async getHandoffState(sessionId: string): Promise<HandoffState | null> {
    return this.track(() => this.repos.handoffs.state(v.validate(v.lookupId, sessionId, 'sessionId')));
  }

  async listPendingHandoffs(): Promise<SessionRow[]> {
    return this.track(() => this.repos.handoffs.listPending());
  }

  /** pending -> running; exactly one of concurrent callers gets true. */
  async claimHandoff(sessionId: string): Promise<boolean> {
    return this.track(() => this.repos.handoffs.claim(sessionId));
  }

  async completeHandoff(sessionId: string): Promise<void> {
    await this.track(() => this.repos.handoffs.complete(sessionId));
  }

  async failHandoff(sessionId: string, error: string): Promise<void> {
    await this.track(() => this.repos.handoffs.fail(sessionId, error));
  }

  // ── Search ──

  /**
   * Full-text search over messages (content, tool name and tool-call arguments). Any string gives results
   * or an empty list. `sort`: 'relevance' (default), 'newest' or 'oldest' (case and surrounding whitespace
   * ignored, as in Hermes); any other value is a ValidationError.
   */
  async searchMessages(query: string, options: SearchMessagesOptions = {}): Promise<SearchHit[]> {
    return this.track(() => this.repos.search.searchMessages(query, options));
  }

  /** Sessions by latest activity, optionally of one source, with `lastActive`. */
  async searchSessions(options: SearchSessionsOptions = {}): Promise<SessionWithActivity[]> {
    return this.track(async () => {
      const o = v.validate(v.searchSessionsOptions, options, 'options');
      return this.repos.search.searchSessions(o.source, o.limit, o.offset);
    });
  }

  // ── Export ──

  async exportSession(sessionId: string): Promise<SessionExport | null> {
    return this.track(() => this.repos.exports.exportSession(v.validate(v.lookupId, sessionId, 'sessionId')));
  }

  async exportAll(options: { source?: string | null } = {}): Promise<SessionExportWithActivity[]> {
    return this.track(() => this.repos.exports.exportAll(v.validate(v.sourceFilterOptions, options, 'options').source));
  }

  // ── Telegram topic mode ──

  async enableTelegramTopicMode(options: EnableTelegramTopicModeOptions): Promise<void> {
    await this.track(() => this.repos.telegramTopics.enable(options));
  }

  async disableTelegramTopicMode(options: DisableTelegramTopicModeOptions): Promise<void> {
    return this.track(async () => {
      const o = v.validate(v.disableTopicModeOptions, options, 'options');
      await this.repos.telegramTopics.disable(o.chatId, o.clearBindings);
    });
  }

  async isTelegramTopicModeEnabled(options: TelegramTopicModeQuery): Promise<boolean> {
    return this.track(async () => {
      const o = v.validate(v.topicModeQuery, options, 'options');
      return this.repos.telegramTopics.isEnabled(o.chatId, o.userId);
    });
  }

  async getTelegramTopicBinding(options: TelegramTopicBindingQuery): Promise<TelegramTopicBinding | null> {
    return this.track(async () => {
      const o = v.validate(v.topicBindingQuery, options, 'options');
      return this.repos.telegramTopics.getBinding(o.chatId, o.threadId);
    });
  }

  async bindTelegramTopic(options: BindTelegramTopicOptions): Promise<void> {
    return this.track(() =>
      this.guard(
        () => this.repos.telegramTopics.bind(options),
        () => ({ session: options.sessionId, topicSession: options.sessionId }),
      ),
    );
  }

  async isTelegramSessionLinkedToTopic(options: { sessionId: string }): Promise<boolean> {
    return this.track(() =>
      this.repos.telegramTopics.isSessionLinked(v.validate(v.linkedQuery, options, 'options').sessionId),
    );
  }

  async listUnlinkedTelegramSessionsForUser(options: UnlinkedTelegramSessionsQuery): Promise<RichSessionRow[]> {
    return this.track(async () => {
      const o = v.validate(v.unlinkedQuery, options, 'options');
      return this.repos.telegramTopics.listUnlinked(o.userId, o.limit);
    });
  }

  // ── Internals ──

  private assertOpen(): void {
    if (this.calls.isShut) throw new StoreClosedError();
  }

  /** Run a public call unless the store is closing; close() waits until it has settled. */
  private track<T>(call: () => Promise<T>): Promise<T> {
    return this.calls.admit(call);
  }

  /**
   * Turn a constraint violation that slipped past the repositories' own checks (a concurrent writer got
   * in between) into the typed error the caller would otherwise have seen.
   */
  private async guard<T>(
    call: () => Promise<T>,
    // Read only after a constraint violation, so after the repository validated the inputs it names.
    contextOf: () => {
      parent?: string | null;
      session?: string;
      title?: string | null;
      sessionId?: string;
      topicSession?: string;
    },
  ): Promise<T> {
    try {
      return await call();
    } catch (error) {
      // Driver errors arrive as DatabaseError; a constraint violation among them gets its own type.
      const kind = constraintViolation(error);
      if (kind === undefined && error instanceof SessionDbError) throw error;
      const context = kind === undefined ? {} : contextOf();
      if (kind === 'foreign-key') {
        if (context.parent) throw new SessionNotFoundError(context.parent, 'parent session');
        if (context.session) throw new SessionNotFoundError(context.session);
      }
      if (kind === 'unique') {
        if (context.topicSession) throw new TopicAlreadyLinkedError(context.topicSession);
        const cleaned = context.title ? sanitizeTitle(context.title) : null;
        if (cleaned) {
          const holder = await this.repos.titles.getSessionByTitle(cleaned);
          if (holder && holder.id !== context.sessionId) throw new TitleConflictError(cleaned, holder.id);
        }
      }
      throw error;
    }
  }
}
