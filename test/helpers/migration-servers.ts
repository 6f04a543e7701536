import { EasClient } from '../../src/client/index.js';
import { startListeningServer, type ListeningServer } from './http-server.js';
import { ADMIN_PASSWORD } from './storage.js';

/** A source and a target deployment for `eas migrate`, each with an administrator's client and an API key. */
export interface MigrationServers {
  source: ListeningServer;
  target: ListeningServer;
  sourceAdmin: EasClient;
  targetAdmin: EasClient;
  /** The pipeline's way: one API key per deployment, in the environment. */
  env: Record<string, string>;
}

export async function startMigrationServers(
  sourceName: string,
  targetName: string,
): Promise<MigrationServers> {
  const [source, target] = await Promise.all([
    startListeningServer(sourceName),
    startListeningServer(targetName),
  ]);
  const login = (server: ListeningServer) =>
    new EasClient({
      baseUrl: server.base,
      credentials: { scheme: 'maxauth', user: 'MAXADMIN', password: ADMIN_PASSWORD },
    });
  const sourceAdmin = login(source);
  const targetAdmin = login(target);
  const env = {
    EAS_SOURCE_APIKEY: await sourceAdmin.apikeys.create(-1),
    EAS_TARGET_APIKEY: await targetAdmin.apikeys.create(-1),
  };
  return { source, target, sourceAdmin, targetAdmin, env };
}
