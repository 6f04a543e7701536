import { typedView } from '../db/schema.js';
import { errors } from '../errors.js';
import type { BodyMemberWriter } from '../oslc/write-extensions.js';
import { contentTypeOf } from './response.js';
import { checkedBase64, type AttachmentService } from './service.js';

/*
 * Attachments in the write path (src/oslc/README.md, "Write path"): a `doclinks` array in a record's create or
 * update body adds attachments with their content in base64 `documentdata`, in the record's transaction; deleting
 * a record deletes its attachments with it.
 */

/** An entry's values by lower-case name (`urlName`, `urlname` and `URLNAME` are one). */
function valuesOf(entry: Record<string, unknown>): Map<string, unknown> {
  return new Map(Object.entries(entry).map(([name, value]) => [name.toLowerCase(), value]));
}

function textOf(values: Map<string, unknown>, ...names: string[]): string | undefined {
  for (const name of names) {
    const value = values.get(name);
    if (typeof value === 'string' && value.trim() !== '') return value.trim();
  }
  return undefined;
}

/**
 * The writer of `doclinks` entries: `documentdata` (base64, required), the file name in `urlname` (as the deployed
 * systems' documentation writes it), `document` or `fileName`, and `description`, `doctype`, `urltype`, `mimetype`.
 */
export function doclinksWriter(attachments: AttachmentService): BodyMemberWriter {
  return async ({ db, object, row, entries, user }) => {
    for (const entry of entries) {
      const values = valuesOf(entry);
      if (textOf(values, '_action')?.toLowerCase() === 'delete') {
        throw errors.badRequest('An attachment is deleted at its own address, not in the record body.', {
          attrName: '_action',
          objPath: 'doclinks',
        });
      }
      const data = values.get('documentdata');
      if (typeof data !== 'string') {
        throw errors.badRequest('Each doclinks entry needs its content as base64 text in documentdata.', {
          attrName: 'documentdata',
          objPath: 'doclinks',
        });
      }
      const fileName = textOf(values, 'urlname', 'document', 'filename') ?? 'attachment';
      await attachments.write(
        typedView(db),
        { object: object.name, uniqueId: Number(row[object.uniqueId]) },
        {
          fileName,
          description: textOf(values, 'description') ?? null,
          urlType: textOf(values, 'urltype')?.toUpperCase() ?? 'FILE',
          docType: textOf(values, 'doctype') ?? 'Attachments',
          contentType: contentTypeOf(fileName, textOf(values, 'mimetype', 'contenttype')),
        },
        [checkedBase64(data.replace(/\s/g, ''))],
        user,
      );
    }
  };
}
