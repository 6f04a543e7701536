import type { Migration } from './migration.js';

/**
 * The record a work order follows up (`wsmethod:createFollowUp`, docs/compatibility.md "Actions"): its key and
 * class, as the deployed systems' ORIGRECORDID and ORIGRECORDCLASS hold them. Every statement applies again over a
 * schema it has already changed.
 */
export const workorderFollowUp: Migration = {
  name: '0028-workorder-followup',
  phase: 'expand',
  statements: [
    `alter table workorder add column if not exists origrecordid varchar(25),
       add column if not exists origrecordclass varchar(16)`,
  ],
};
