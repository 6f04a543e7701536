import { Type } from 'typebox';

/** `<resource>/doclinks`: the attachments of one record of an object structure. */
export const AttachmentsParams = Type.Object({
  os: Type.String({ pattern: '^[A-Za-z0-9_]{1,30}$' }),
  id: Type.String({ minLength: 1, maxLength: 1024 }),
});

/** `<resource>/doclinks/<id>` (or the `localref` form `<n>-<id>`), and `<resource>/doclinks/meta/<id>`. */
export const AttachmentParams = Type.Object({
  os: Type.String({ pattern: '^[A-Za-z0-9_]{1,30}$' }),
  id: Type.String({ minLength: 1, maxLength: 1024 }),
  doclink: Type.String({ minLength: 1, maxLength: 40 }),
});

export const AttachmentQuery = Type.Record(Type.String(), Type.String());

/** The headers of an upload, as IBM's clients send them (docs/compatibility.md, "Attachments"). */
export const UploadHeaders = Type.Object({
  slug: Type.Optional(Type.String({ maxLength: 255 })),
  'x-document-meta': Type.Optional(Type.String({ maxLength: 60 })),
  'x-document-description': Type.Optional(Type.String({ maxLength: 254 })),
  'x-method-override': Type.Optional(Type.String()),
  'custom-encoding': Type.Optional(Type.String()),
});

export const DeleteHeaders = Type.Object({
  'x-method-override': Type.Optional(Type.String()),
});
