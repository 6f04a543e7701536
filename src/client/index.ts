export { BACKUP_HEADERS, CollectionQuery, EasClient } from './client.js';
export type {
  BackupDownload,
  CollectionPage,
  LookupOptions,
  Member,
  PackageRecord,
  PackageRef,
  DeployOptions,
  QueryOptions,
} from './client.js';
export { EasClientError, presentableUrl, readServerError } from './errors.js';
export type { EasClientErrorKind, FailedRequest, ServerErrorFields } from './errors.js';
export { HttpSession } from './http.js';
export type {
  BinaryAnswer,
  ClientOptions,
  Credentials,
  QueryValue,
  RequestOptions,
  StreamedAnswer,
} from './http.js';
