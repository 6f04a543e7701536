import { Type, type Static } from 'typebox';

/** Bodies and queries of the migration endpoints (docs/migration.md, "Endpoints"). */
const pkgdefname = Type.String({ minLength: 1, maxLength: 30 });
const dmpackageid = Type.Integer({ minimum: 1 });

export const CreateBody = Type.Object({
  pkgdefname,
  readme: Type.Optional(Type.String({ maxLength: 1000 })),
});
export type CreateBody = Static<typeof CreateBody>;

export const DistributeBody = Type.Object({
  pkgdefname,
  dmpackageid,
  targetname: Type.Optional(Type.String({ minLength: 1, maxLength: 30 })),
});
export type DistributeBody = Static<typeof DistributeBody>;

/** preview, close, delete: the package named by its definition and id. */
export const PackageBody = Type.Object({ pkgdefname, dmpackageid });
export type PackageBody = Static<typeof PackageBody>;

/**
 * deploy, completedeploy: the package, and `force` to deploy over records changed on the target since the source
 * last matched them (docs/migration.md, "Drift guard").
 */
export const DeployBody = Type.Object({ pkgdefname, dmpackageid, force: Type.Optional(Type.Boolean()) });
export type DeployBody = Static<typeof DeployBody>;

/** preview: the package; `backout` previews the back-out of a deployed package instead (docs/migration.md). */
export const PreviewBody = Type.Object({ pkgdefname, dmpackageid, backout: Type.Optional(Type.Boolean()) });
export type PreviewBody = Static<typeof PreviewBody>;

/** backout: the deployed package, and `force` to restore records changed since the deploy (docs/migration.md). */
export const BackoutBody = Type.Object({ pkgdefname, dmpackageid, force: Type.Optional(Type.Boolean()) });
export type BackoutBody = Static<typeof BackoutBody>;

/** reset, toggleactive: the definition. */
export const DefinitionBody = Type.Object({ pkgdefname });
export type DefinitionBody = Static<typeof DefinitionBody>;

export const DownloadQuery = Type.Object({
  dmpackagedef: pkgdefname,
  dmpackageid: Type.Integer({ minimum: 1 }),
});
export type DownloadQuery = Static<typeof DownloadQuery>;

/** `GET /dm/package`: one package record, with the progress of a deploy this process runs (docs/migration.md). */
export const PackageQuery = Type.Object({ pkgdefname, dmpackageid: Type.Integer({ minimum: 1 }) });
export type PackageQuery = Static<typeof PackageQuery>;

export const UploadQuery = Type.Object({
  // Required: the target-side record names the file it came from (docs/migration.md, "Uploads").
  filename: Type.String({ minLength: 1, maxLength: 200 }),
});
export type UploadQuery = Static<typeof UploadQuery>;
