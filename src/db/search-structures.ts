/**
 * The search structures our migrations create and `drizzle-kit push` drops when our tables are not excluded
 * (it removes what the app's schema does not declare: FTS5 tables, triggers, generated columns, GIN indexes).
 * Opening looks for them with one catalog query, so a store says what is missing instead of failing its first
 * search. Each object is listed under the migration that creates it, and under the one that drops it when a
 * later migration does: only what the migrations recorded in the database leave is expected (an older store, or
 * a test's partial migration folder, is not reported).
 */
import { MigrationError } from '../errors.js';

export interface MissingStructure {
  kind: string;
  name: string;
}

/** The structures of `created` (by migration tag) that the applied migrations created and did not drop since. */
export function expected<K>(
  created: Record<string, ReadonlyArray<[K, string]>>,
  appliedTags: readonly string[],
  dropped: Record<string, ReadonlyArray<[K, string]>> = {},
) {
  const gone = new Set(appliedTags.flatMap((tag) => dropped[tag] ?? []).map(([kind, name]) => `${kind} ${name}`));
  return appliedTags
    .flatMap((tag) => created[tag] ?? [])
    .filter(([kind, name]) => !gone.has(`${kind} ${name}`))
    .map(([kind, name]) => ({ kind, name }));
}

/** The MigrationError for a store whose migration history records search structures that are not there. */
export function missingSearchStructuresError(
  where: string,
  pushDrops: string,
  missing: readonly MissingStructure[],
): MigrationError {
  const list = missing.map(
    (m) => `${m.kind === 'column' || m.kind === 'trigger' ? `${m.kind} messages.` : `${m.kind} `}${m.name}`,
  );
  return new MigrationError(
    'MISSING_SEARCH_STRUCTURES',
    `${where}: search structures that its recorded migrations created are missing: ${list.join(', ')}. ` +
      'They are usually dropped by `drizzle-kit push` run without a tablesFilter that leaves our tables alone ' +
      `(push removes what the app's schema does not declare: ${pushDrops}; ` +
      "see docs/drizzle-app.md in the package's repository for the filter). Search would fail or miss " +
      'messages. To restore them, copy the sessions into a fresh store, whose migrations create them: open this one with ' +
      '{ migrate: false, allowMissingSearchStructures: true } and copyStore() it into the new one ' +
      '(or restore a backup taken before the push).',
  );
}
