import type { Api } from './api.js';
import { whereProblem } from './where-check.js';

/** A package definition as MXAPIDMPKGDEF answers it (docs/migration.md, "Package definitions"). */
export interface StoredDefinition {
  href: string;
  pkgdefname: string;
  type: string;
  status: string;
  active?: boolean;
  description?: string | null;
  dmpkgdefcontent?: Array<{
    objectstructure: string;
    whereclause?: string | null;
    cfgdataorder?: number | null;
  }>;
  /** The password is written, never answered. */
  dmpkgdsttrgt?: Array<{
    targetname: string;
    type: string;
    url?: string | null;
    username?: string | null;
    schemaname?: string | null;
    description?: string | null;
  }>;
}

export interface ContentDraft {
  objectstructure: string;
  whereclause: string;
}

export interface TargetDraft {
  targetname: string;
  type: 'FILE' | 'DATABASE';
  url: string;
  username: string;
  /** Blank: the stored password stays (a new one is written only when typed). */
  password: string;
  schemaname: string;
}

/** What the form edits. */
export interface DefinitionDraft {
  pkgdefname: string;
  type: 'SNAPSHOT' | 'CHANGE';
  status: string;
  description: string;
  content: ContentDraft[];
  targets: TargetDraft[];
}

export const STATUSES = ['WAPPR', 'APPR', 'LOCKED'];

const SELECT =
  'oslc.select=pkgdefname,type,status,active,description,' +
  'dmpkgdefcontent{objectstructure,whereclause,cfgdataorder},' +
  'dmpkgdsttrgt{targetname,type,url,username,schemaname,description}&oslc.orderBy=%2Bpkgdefname';

/** The definitions with their content rows and targets, and the object structures a content row may name. */
export async function loadDefinitions(api: Api) {
  const [definitions, meta] = await Promise.all([
    api.members('mxapidmpkgdef', SELECT),
    api.call<{ member?: Array<{ name: string }> }>('/oslc/apimeta?lean=1'),
  ]);
  const structures = (meta.member ?? []).map((entry) => entry.name.toUpperCase()).sort();
  return { definitions: definitions as unknown as StoredDefinition[], structures };
}

export function newTarget(): TargetDraft {
  return { targetname: 'FILE1', type: 'FILE', url: '', username: '', password: '', schemaname: '' };
}

/** A new definition's draft, or a stored one's (its content rows in deploy order). */
export function draftOf(stored: StoredDefinition | undefined, structures: string[]): DefinitionDraft {
  if (!stored)
    return {
      pkgdefname: '',
      type: 'SNAPSHOT',
      status: 'APPR',
      description: '',
      content: [{ objectstructure: structures[0] ?? '', whereclause: '' }],
      targets: [newTarget()],
    };
  const content = [...(stored.dmpkgdefcontent ?? [])].sort(
    (one, other) => (one.cfgdataorder ?? 0) - (other.cfgdataorder ?? 0),
  );
  return {
    pkgdefname: stored.pkgdefname,
    type: stored.type === 'CHANGE' ? 'CHANGE' : 'SNAPSHOT',
    status: stored.status,
    description: stored.description ?? '',
    content: content.map((row) => ({
      objectstructure: row.objectstructure,
      whereclause: row.whereclause ?? '',
    })),
    targets: (stored.dmpkgdsttrgt ?? []).map((target) => ({
      targetname: target.targetname,
      type: target.type === 'DATABASE' ? 'DATABASE' : 'FILE',
      url: target.url ?? '',
      username: target.username ?? '',
      password: '',
      schemaname: target.schemaname ?? '',
    })),
  };
}

/** Why the draft cannot be saved yet, or nothing. */
export function draftProblem(draft: DefinitionDraft): string | undefined {
  if (draft.pkgdefname.trim() === '') return 'Give the definition a name.';
  if (draft.content.length === 0) return 'Add at least one object structure.';
  if (draft.content.some((row) => row.objectstructure === ''))
    return 'Choose an object structure on every row.';
  if (draft.content.some((row) => whereProblem(row.whereclause) !== undefined))
    return 'Correct the where clauses marked.';
  if (draft.targets.some((target) => target.targetname.trim() === '')) return 'Name every target.';
  return undefined;
}

/**
 * The MXAPIDMPKGDEF body of a draft: content rows numbered in the order shown (`cfgdataorder`), and the child
 * collections sent whole, so that on an update they replace the stored ones (docs/compatibility.md, "Child
 * collections"); a target's password only when one was typed.
 */
export function bodyOf(draft: DefinitionDraft, creating: boolean): Record<string, unknown> {
  const text = (value: string) => (value.trim() === '' ? null : value.trim());
  return {
    ...(creating && { pkgdefname: draft.pkgdefname.trim().toUpperCase() }),
    type: draft.type,
    status: draft.status,
    description: text(draft.description),
    dmpkgdefcontent: draft.content.map((row, index) => ({
      objectstructure: row.objectstructure,
      whereclause: text(row.whereclause),
      cfgdataorder: index + 1,
    })),
    dmpkgdsttrgt: draft.targets.map((target) => ({
      targetname: target.targetname.trim().toUpperCase(),
      type: target.type,
      ...(target.type === 'DATABASE' && {
        url: text(target.url),
        username: text(target.username),
        schemaname: text(target.schemaname),
      }),
      ...(target.password !== '' && { password: target.password }),
    })),
  };
}
