import { useEffect, useState } from 'preact/hooks';
import type { Api } from './api.js';
import { ErrorMessage, formatDate, Page, useAction, type PageProps } from './common.js';

/** A record of MXAPIAUDIT (docs/audit.md, "A record"), the columns the page shows. */
interface AuditRecord {
  auditid: number;
  eventtime: string;
  eventtype: string;
  outcome: string;
  userid?: string | null;
  authscheme?: string | null;
  clientaddr?: string | null;
  servername?: string | null;
  objectname?: string | null;
  objectkey?: string | null;
  detail?: string | null;
}

export interface AuditFilters {
  eventtype: string;
  userid: string;
  objectname: string;
  /** `datetime-local` values (the browser's time zone), blank for no bound. */
  from: string;
  to: string;
}

const PAGE_SIZE = 25;
const COLUMNS =
  'auditid,eventtime,eventtype,outcome,userid,authscheme,clientaddr,servername,objectname,objectkey,detail';

/** A value as a quoted literal of `oslc.where` (a double quote cannot occur in what the filters match). */
const literal = (value: string) => `"${value.trim().replace(/["\\]/g, '')}"`;

/**
 * The filters as an `oslc.where` clause: an event type ending in `*` is a prefix (`package.*`: every package event,
 * the query language's `%` pattern); user and object are matched exactly (upper case, as stored); the time range
 * bounds `eventtime`.
 */
export function whereOf(filters: AuditFilters): string {
  const terms: string[] = [];
  const eventtype = filters.eventtype.trim();
  if (eventtype !== '') terms.push(`eventtype=${literal(eventtype.replace(/\*$/, '%'))}`);
  if (filters.userid.trim() !== '') terms.push(`userid=${literal(filters.userid.toUpperCase())}`);
  if (filters.objectname.trim() !== '') terms.push(`objectname=${literal(filters.objectname.toUpperCase())}`);
  if (filters.from !== '') terms.push(`eventtime>=${literal(new Date(filters.from).toISOString())}`);
  if (filters.to !== '') terms.push(`eventtime<=${literal(new Date(filters.to).toISOString())}`);
  return terms.join(' and ');
}

interface AuditPage {
  /** The clause the page was read with: shown, so that the filter in force is never in doubt. */
  where: string;
  pageno: number;
  records: AuditRecord[];
  totalCount: number;
  totalPages: number;
}

async function loadPage(api: Api, filters: AuditFilters, pageno: number): Promise<AuditPage> {
  const where = whereOf(filters);
  const answer = await api.call<{
    member?: AuditRecord[];
    responseInfo?: { totalCount?: number; totalPages?: number };
  }>(
    `/oslc/os/mxapiaudit?lean=1&oslc.select=${COLUMNS}&oslc.orderBy=-auditid&oslc.pageSize=${PAGE_SIZE}` +
      `&pageno=${pageno}&collectioncount=1${where ? `&oslc.where=${encodeURIComponent(where)}` : ''}`,
  );
  return {
    where,
    pageno,
    records: answer.member ?? [],
    totalCount: answer.responseInfo?.totalCount ?? 0,
    totalPages: answer.responseInfo?.totalPages ?? 0,
  };
}

const NO_FILTERS: AuditFilters = { eventtype: '', userid: '', objectname: '', from: '', to: '' };

/** The audit trail, newest first, filtered and paged; and the integrity check of its chain (docs/audit.md). */
export function Audit({ api }: PageProps) {
  const [filters, setFilters] = useState<AuditFilters>(NO_FILTERS);
  const [applied, setApplied] = useState<{ filters: AuditFilters; pageno: number }>({
    filters: NO_FILTERS,
    pageno: 1,
  });
  const [page, setPage] = useState<AuditPage | undefined>(undefined);
  const [error, setError] = useState<unknown>(undefined);
  useEffect(() => {
    let current = true;
    loadPage(api, applied.filters, applied.pageno).then(
      (loaded) => current && (setPage(loaded), setError(undefined)),
      (failure: unknown) => current && setError(failure),
    );
    return () => {
      current = false;
    };
  }, [applied]);
  return (
    <Page title="Audit trail">
      <VerifyChain api={api} />
      <AuditFilterForm
        filters={filters}
        change={(part) => setFilters({ ...filters, ...part })}
        apply={() => setApplied({ filters, pageno: 1 })}
      />
      <ErrorMessage error={error} />
      {page && <AuditTable page={page} go={(pageno) => setApplied({ ...applied, pageno })} />}
    </Page>
  );
}

function AuditFilterForm({
  filters,
  change,
  apply,
}: {
  filters: AuditFilters;
  change: (part: Partial<AuditFilters>) => void;
  apply: () => void;
}) {
  const field = (name: keyof AuditFilters, label: string, type = 'text', placeholder?: string) => (
    <span class="field">
      <label for={`audit-${name}`}>{label}</label>
      <input
        id={`audit-${name}`}
        type={type}
        value={filters[name]}
        placeholder={placeholder}
        onInput={(event) => change({ [name]: event.currentTarget.value })}
      />
    </span>
  );
  return (
    <form
      class="inline"
      aria-labelledby="audit-filter-title"
      onSubmit={(event) => {
        event.preventDefault();
        apply();
      }}
    >
      <h2 id="audit-filter-title">Filter</h2>
      {field('eventtype', 'Event type', 'text', 'package.* or login.failure')}
      {field('userid', 'User')}
      {field('objectname', 'Object', 'text', 'DMPACKAGE')}
      {field('from', 'From', 'datetime-local')}
      {field('to', 'To', 'datetime-local')}
      <button type="submit">Show</button>
    </form>
  );
}

function AuditTable({ page, go }: { page: AuditPage; go: (pageno: number) => void }) {
  const { pageno } = page;
  return (
    <section aria-labelledby="audit-records-title">
      <h2 id="audit-records-title">Records</h2>
      <p class="where">{page.where === '' ? 'Every record, newest first.' : <code>{page.where}</code>}</p>
      <p class="paging" role="status">
        {page.totalCount === 0
          ? 'No record matches.'
          : `${page.totalCount} records, page ${pageno} of ${page.totalPages}.`}{' '}
        <button type="button" class="secondary" disabled={pageno <= 1} onClick={() => go(pageno - 1)}>
          Newer
        </button>{' '}
        <button
          type="button"
          class="secondary"
          disabled={pageno >= page.totalPages}
          onClick={() => go(pageno + 1)}
        >
          Older
        </button>
      </p>
      <div class="scroll">
        <table>
          <thead>
            <tr>
              {['Id', 'Time', 'Event', 'Outcome', 'User', 'From', 'Object', 'Detail'].map((title) => (
                <th key={title} scope="col">
                  {title}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {page.records.map((record) => (
              <tr key={record.auditid} data-audit={record.auditid}>
                <td>{record.auditid}</td>
                <td>{formatDate(record.eventtime)}</td>
                <td data-eventtype>{record.eventtype}</td>
                <td>{record.outcome}</td>
                <td data-userid>
                  {record.userid} <small>{record.authscheme}</small>
                </td>
                <td>
                  {record.clientaddr} <small>{record.servername}</small>
                </td>
                <td>
                  {record.objectname} <small>{record.objectkey}</small>
                </td>
                <td class="value">{record.detail}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </section>
  );
}

interface VerificationReport {
  ok: boolean;
  checked: number;
  unsealed: number;
  head: { chainseq: number; digest: string } | null;
  problem?: { auditid: number | null; chainseq: number | null; reason: string };
}

/** `GET <root>/audit/verify`: whether the chain holds, else the first record found wrong and why. */
function VerifyChain({ api }: { api: Api }) {
  const action = useAction();
  const [report, setReport] = useState<VerificationReport | undefined>(undefined);
  const verify = () =>
    void action.run(async () => {
      setReport(await api.call<VerificationReport>('/oslc/audit/verify?lean=1'));
      return undefined;
    });
  return (
    <section class="verify" aria-labelledby="verify-title">
      <h2 id="verify-title">Integrity</h2>
      <button type="button" onClick={verify} disabled={action.busy}>
        Verify chain
      </button>
      <ErrorMessage error={action.error} />
      {report && (
        <p
          role="status"
          class={report.ok ? 'ok' : 'error'}
          data-verified={report.ok ? 'ok' : 'broken'}
          data-auditid={report.problem?.auditid ?? undefined}
        >
          {report.ok
            ? `The chain holds: ${report.checked} records checked` +
              (report.head ? `, head at position ${report.head.chainseq} (${report.head.digest}).` : '.')
            : `The chain does not verify: ${report.problem?.reason ?? 'unknown problem'}.`}
        </p>
      )}
    </section>
  );
}
