/**
 * `openStore(url, { mustExist: true })`: open a store that is already there, never create one. A file or a data
 * directory is checked by its engine before anything is opened (`assertLocationExists`); a server database
 * always "exists", so there the test is whether it holds our migration history.
 */
import { StoreNotFoundError } from '../errors.js';
import type { Backend } from './backend.js';

/** Refuse, once connected, a server database without hermes-sessiondb's migration history (an empty database). */
export async function assertHoldsStore(backend: Pick<Backend, 'url' | 'migrationStatus'>): Promise<void> {
  const status = await backend.migrationStatus();
  if (status.applied.length === 0 && status.unknownHashes.length === 0) {
    throw new StoreNotFoundError(
      backend.url,
      'NO_STORE',
      backend.url,
      'the database holds no hermes-sessiondb store (no migration history)',
    );
  }
}
