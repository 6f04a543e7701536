import type { WriteRules } from '../oslc/write-extensions.js';

/**
 * Who wrote a work log and when, set by the service as the deployed systems set it (docs/compatibility.md, "Work
 * logs"): `createby`/`createdate` once, on insert, with `modifyby`/`modifydate` equal to them; `modifyby`/
 * `modifydate` again on every change. A client cannot set any of the four (they are generated attributes).
 */
export const worklogWriteRules: WriteRules = {
  async beforeInsert({ values, user }) {
    const now = new Date();
    values.createby = user.userid;
    values.createdate = now;
    values.modifyby = user.userid;
    values.modifydate = now;
  },
  async beforeUpdate({ values, user }) {
    values.modifyby = user.userid;
    values.modifydate = new Date();
  },
};
