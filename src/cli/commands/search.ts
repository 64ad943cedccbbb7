import { type Command, Option } from 'commander';
import type { SearchSort } from '../../types.js';
import { type CliContext, collect, dbOption, positiveInt } from '../shared.js';
import { readingStore } from '../stores.js';

interface SearchFlags {
  db: string;
  source?: string[];
  excludeSource?: string[];
  role?: string[];
  limit: number;
  sort: SearchSort;
  json?: boolean;
}

/** `search`: full-text search over messages, printed as text or JSON lines. */
export function searchCommand(program: Command, cli: CliContext): Command {
  const { io } = cli;
  return program
    .command('search')
    .description('search messages (content, tool names, tool-call arguments)')
    .argument('<query>', 'the search query (quotes for phrases, word* for prefixes, OR, NOT)')
    .addOption(dbOption())
    .option('--source <source>', 'only these sources (repeatable)', collect)
    .option('--exclude-source <source>', 'not these sources (repeatable)', collect)
    .option('--role <role>', 'only these roles (repeatable)', collect)
    .option('--limit <n>', 'at most this many results', positiveInt('--limit'), 20)
    .addOption(
      new Option('--sort <order>', 'result order').choices(['relevance', 'newest', 'oldest']).default('relevance'),
    )
    .option('--json', 'print JSON lines instead of text')
    .addHelpText(
      'after',
      '\nExamples:\n  hermes-sessiondb search docker\n  hermes-sessiondb search "记忆断裂" --source telegram --sort newest',
    )
    .action(async (query: string, o: SearchFlags) => {
      await readingStore(o.db, cli.schema(), async (store) => {
        const hits = await store.searchMessages(query, {
          sourceFilter: o.source ?? null,
          excludeSources: o.excludeSource ?? null,
          roleFilter: o.role ?? null,
          limit: o.limit,
          sort: o.sort,
        });
        for (const h of hits) {
          if (o.json) io.out(`${JSON.stringify(h)}\n`);
          else
            io.out(
              `${new Date(h.timestamp * 1000).toISOString()}  ${h.sessionId}  [${h.source}/${h.role}]  ${(h.snippet ?? '').replace(/\s+/g, ' ').trim()}\n`,
            );
        }
        if (!o.json) io.out(`${hits.length} result${hits.length === 1 ? '' : 's'}\n`);
      });
    });
}
