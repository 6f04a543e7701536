import { Type } from 'typebox';

/** `:os` is an object-structure name or alias, in any case. */
export const StructureParams = Type.Object({ os: Type.String({ pattern: '^[A-Za-z0-9_]{1,30}$' }) });

export const ResourceParams = Type.Object({
  os: Type.String({ pattern: '^[A-Za-z0-9_]{1,30}$' }),
  id: Type.String({ minLength: 1, maxLength: 1024 }),
});

/** Query strings are read by `readCollectionParams`; the schema only fixes that values are strings. */
export const QueryStringSchema = Type.Record(Type.String(), Type.String());

/** A resource body: one JSON object (attributes, child collections). */
export const ResourceBody = Type.Record(Type.String(), Type.Unknown());

export const WriteHeaders = Type.Object({
  'x-method-override': Type.Optional(Type.String()),
  patchtype: Type.Optional(Type.String()),
  properties: Type.Optional(Type.String()),
});

/** A collection POST: one resource, or with `x-method-override: BULK` an array of elements (src/oslc/bulk.ts). */
export const CollectionBody = Type.Union([ResourceBody, Type.Array(Type.Unknown())]);

/** `/os/:os/:id/*`: a child collection or a child member below a resource (src/oslc/child-routes.ts). */
export const ChildParams = Type.Object({
  os: Type.String({ pattern: '^[A-Za-z0-9_]{1,30}$' }),
  id: Type.String({ minLength: 1, maxLength: 1024 }),
  '*': Type.String({ minLength: 1, maxLength: 1024 }),
});
