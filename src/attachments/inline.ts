import type { InlineMemberReader } from '../oslc/inline-members.js';
import type { DoclinkRow } from './repository.js';
import { attachmentsJson } from './response.js';
import type { AttachmentService } from './service.js';

/*
 * `oslc.select=doclinks{*}` on the parent structure (docs/compatibility.md, "Attachments"): each record carries its
 * attachments inline, as its `doclinks` address lists them (`href`, `member`), read for the whole page in one
 * statement. Named attributes (`doclinks{fileName,description}`, or the DOCLINKS names `document`, `doctype`, ...)
 * narrow each member's `describedBy` to them.
 */

/** DOCLINKS attribute names, as the deployed systems' object names them, to the metadata's names. */
const DOCLINKS_NAMES: Readonly<Record<string, string>> = {
  doclinksid: 'identifier',
  document: 'fileName',
  urlname: 'fileName',
  doctype: 'docType',
  urltype: 'urlType',
  mimetype: 'contentType',
  attachmentsize: 'attachmentSize',
  createby: 'creator',
  createdate: 'created',
  changeby: 'contributor',
  changedate: 'modified',
};

function narrowed(json: Record<string, unknown>, names: readonly string[], lean: boolean): void {
  const wanted = new Set(names.map((name) => (DOCLINKS_NAMES[name] ?? name).toLowerCase()));
  const members = (json[lean ? 'member' : 'rdfs:member'] ?? []) as Array<Record<string, unknown>>;
  const describedBy = lean ? 'describedBy' : 'spi:describedBy';
  for (const member of members) {
    const metadata = member[describedBy] as Record<string, unknown>;
    member[describedBy] = Object.fromEntries(
      Object.entries(metadata).filter(
        ([name]) =>
          name === (lean ? 'href' : 'rdf:about') || wanted.has(name.replace(/^[a-z]+:/, '').toLowerCase()),
      ),
    );
  }
}

export function doclinksReader(attachments: AttachmentService): InlineMemberReader {
  return async ({ object, owners, names, lean }) => {
    const byOwner = new Map<number, DoclinkRow[]>();
    for (const row of await attachments.listOwned(
      object,
      owners.map((owner) => owner.uniqueId),
    )) {
      const owner = Number(row.ownerid);
      byOwner.set(owner, [...(byOwner.get(owner) ?? []), row]);
    }
    const found = new Map<number, unknown>();
    for (const { uniqueId, href } of owners) {
      const collection = `${href}/doclinks`;
      const json = attachmentsJson(
        byOwner.get(uniqueId) ?? [],
        {
          lean,
          collection,
          member: (id) => `${collection}/${id}`,
          meta: (id) => `${collection}/meta/${id}`,
        },
        [],
      );
      if (names !== '*') narrowed(json, names, lean);
      found.set(uniqueId, json);
    }
    return found;
  };
}
