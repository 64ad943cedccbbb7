/**
 * The registry's second half: the openStore options one engine alone takes, each engine's in its folder
 * (`src/db/<engine>/options.ts`); openStoreOptionsSchema (src/open.ts) holds them with the shared ones. Apart
 * from `engines.ts` because these are zod schemas: the CLI reads URLs through the registry without loading zod.
 */
import { pgOpenOptions } from './pg/options.js';
import { sqliteOpenOptions } from './sqlite/options.js';

export const engineOpenOptions = { ...sqliteOpenOptions, ...pgOpenOptions };
