import type { ObjectDef } from '../types.js';
import { keyAttribute, uniqueId } from './fragments.js';

/**
 * API keys (src/apikeys, docs/apikeys.md). The `apikey` column holds the sealed value; administrators read it
 * decrypted (a read transform of the key service), and writes follow the key service's write rules.
 */
export const apikeytoken: ObjectDef = {
  name: 'APIKEYTOKEN',
  table: 'apikeytoken',
  uniqueId: 'apikeytokenid',
  // One key per user: the user id is the key, so the rest id never carries the key value.
  keys: ['userid'],
  attributes: [
    uniqueId('apikeytokenid', 'API Key Token ID'),
    keyAttribute('userid', 'User', 30, {
      references: { object: 'MAXUSER', on: [['userid', 'userid']] },
      lookup: { kind: 'table', structure: 'MXAPIPERUSER', where: 'maxuser.userid="*"' },
    }),
    { name: 'apikey', type: 'ALN', title: 'API Key', length: 128 },
    { name: 'expiration', type: 'INTEGER', title: 'Token expiry in minutes', required: true },
    { name: 'creationdate', type: 'DATETIME', title: 'Created', generated: true },
    { name: 'clientcert', type: 'YORN', title: 'Client Certificate', defaultValue: false },
    { name: 'exposedinurl', type: 'YORN', title: 'Sent in a URL', generated: true },
    { name: 'exposeddate', type: 'DATETIME', title: 'First Sent in a URL', generated: true },
  ],
  relations: [{ name: 'maxuser', object: 'MAXUSER', on: [['userid', 'userid']], many: false }],
};
