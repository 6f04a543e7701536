import type { WriteRuleContext, WriteRules } from '../oslc/write-extensions.js';
import { hashPassword } from './password.js';

/** Hashes a password the client sends before the row is written: a user's password is never stored in clear. */
async function hashSentPassword({ values }: WriteRuleContext): Promise<void> {
  if (typeof values.password === 'string') values.password = await hashPassword(values.password);
}

/**
 * The write rules of `MAXUSER`, registered on the resource service by the application (src/app.ts) like any
 * other module's rules: they run after the metadata's validation, so length checks see the sent value.
 */
export const userWriteRules: WriteRules = {
  beforeInsert: hashSentPassword,
  beforeUpdate: hashSentPassword,
};
