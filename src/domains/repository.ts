import type { Kysely } from 'kysely';
import type { DynamicDatabase } from '../db/schema.js';

export interface DomainValueRow {
  domainid: string;
  domaintype: 'ALN' | 'SYNONYM' | 'NUMERIC';
  value: string;
  maxvalue: string | null;
  description: string | null;
  siteid: string | null;
  orgid: string | null;
}

/** Every value of every ALN, SYNONYM and NUMERIC domain (a few thousand rows at most). */
export async function loadDomainValues(db: Kysely<DynamicDatabase>): Promise<DomainValueRow[]> {
  const aln = db
    .selectFrom('alndomain')
    .select(['domainid', 'value', 'description', 'siteid', 'orgid'])
    .execute();
  const synonym = db
    .selectFrom('synonymdomain')
    .select(['domainid', 'value', 'maxvalue', 'description', 'siteid', 'orgid'])
    .execute();
  const numeric = db
    .selectFrom('numericdomain')
    .select(['domainid', 'value', 'description', 'siteid', 'orgid'])
    .execute();
  const [alnRows, synonymRows, numericRows] = await Promise.all([aln, synonym, numeric]);
  const row = (
    domaintype: DomainValueRow['domaintype'],
    source: Record<string, unknown>,
  ): DomainValueRow => ({
    domainid: String(source.domainid),
    domaintype,
    value: String(source.value),
    maxvalue: source.maxvalue === undefined || source.maxvalue === null ? null : String(source.maxvalue),
    description: (source.description as string | null) ?? null,
    siteid: (source.siteid as string | null) ?? null,
    orgid: (source.orgid as string | null) ?? null,
  });
  return [
    ...alnRows.map((source) => row('ALN', source)),
    ...synonymRows.map((source) => row('SYNONYM', source)),
    ...numericRows.map((source) => row('NUMERIC', source)),
  ];
}
