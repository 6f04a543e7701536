import { REASONS, isReasonCode, type Reason, type ReasonCode, type ReasonValues } from './reason-codes.js';

export { REASONS, isReasonCode, type ReasonCode, type ReasonValues };

/**
 * The error contract (docs/errors.md): every failure leaves the service as one error object whose `statusCode`
 * is the HTTP status as a string. Routes and services throw `MaximoError`; only the error handler in `app.ts`
 * turns it into JSON, through `errorBody`.
 */
export interface ErrorDetail {
  /** Attribute the error is about (`errorattrname`). */
  attrName?: string;
  /** Value of that attribute (`errattrvalue`), always sent as a string. */
  attrValue?: string | number | null;
  /** Object the attribute belongs to, lower case (`errorobjpath`). */
  objPath?: string;
}

export class MaximoError extends Error {
  /** The HTTP status: the table's, except where docs/errors.md documents a second one for the code. */
  readonly status: number;

  constructor(
    readonly reasonCode: ReasonCode,
    /** Message text without the reason-code prefix. */
    readonly text: string,
    readonly detail: ErrorDetail = {},
    status: number = REASONS[reasonCode].status,
  ) {
    super(`${reasonCode} - ${text}`);
    this.name = 'MaximoError';
    this.status = status;
  }
}

export function isMaximoError(value: unknown): value is MaximoError {
  return value instanceof MaximoError;
}

/** The error of `code`, its text built from `values`. */
function reason<C extends ReasonCode>(code: C, values: ReasonValues<C>, detail?: ErrorDetail): MaximoError {
  const text: Reason['text'] = REASONS[code].text;
  return new MaximoError(
    code,
    typeof text === 'string' ? text : (text as (...values: unknown[]) => string)(...values),
    detail,
  );
}

/** The errors routes and services throw, one factory per condition; each takes its code's status and text. */
export const errors = {
  notLoggedIn: () => reason('BMXAA7901E', []),
  sessionNotValid: () => reason('BMXAA0021E', []),
  csrfTokenInvalid: () => reason('EAS0040E', []),
  browserRequestRefused: (cause: string) => reason('EAS0042E', [cause]),
  loginSchemeNotAvailable: (scheme: string) => reason('EAS0041E', [scheme]),
  notAuthorized: (objectStructure: string) => reason('BMXAA9301E', [objectStructure]),
  actionNotAllowed: (action: string, objectName: string) => reason('BMXAA0024E', [action, objectName]),
  monitoringNotAuthorized: (element: string) => reason('BMXAA9051E', [element]),
  backupNotServed: (why: string) => reason('EAS0210E', [why]),

  routeNotFound: (method: string, path: string) => reason('EAS0001E', [method, path]),
  malformedJson: () => reason('EAS0003E', []),
  badRequest: (text: string, detail?: ErrorDetail) => reason('EAS0004E', [text], detail),
  bodyTooLarge: (limit: number) => reason('EAS0005E', [limit]),
  unsupportedMediaType: (type: string) => reason('EAS0006E', [type]),
  methodNotAllowed: (method: string) => reason('EAS0007E', [method]),

  internal: () => reason('EAS0500E', []),
  databaseUnavailable: () => reason('EAS0503E', []),
  requestTimeout: (headersSeconds: number, requestSeconds: number) =>
    reason('EAS0408E', [headersSeconds, requestSeconds]),
  headersTooLarge: (limit: number) => reason('EAS0431E', [limit]),
  expectationFailed: (value: string) => reason('EAS0417E', [value], { attrName: 'expect', attrValue: value }),

  resourceNotFound: (objectStructure: string, id: string) => reason('BMXAA8727E', [objectStructure, id]),
  unknownObjectStructure: (name: string) => reason('EAS0002E', [name]),
  /** A child address naming a collection the structure lacks, below a resource that exists. */
  unknownChildCollection: (objectStructure: string, child: string, id: string) =>
    reason('EAS0024E', [objectStructure, child, id], { attrName: child }),
  queryNotParsed: (detail: string) => reason('BMXAA8744E', [detail]),
  unknownAttribute: (name: string, objectName: string) =>
    reason('EAS0020E', [name, objectName], { attrName: name, objPath: objectName.toLowerCase() }),
  queryValueNotValid: (value: string, attrName: string, type: string, objectName: string) =>
    reason('EAS0021E', [value, attrName, type], {
      attrName,
      attrValue: value,
      objPath: objectName.toLowerCase(),
    }),
  stablePageSetGone: (stableId: string) =>
    reason('EAS0022E', [stableId], { attrName: 'stableId', attrValue: stableId }),
  unknownSavedQuery: (name: string, objectStructure: string) =>
    reason('EAS0023E', [name, objectStructure], { attrName: 'savedQuery', attrValue: name }),
  bulkRolledBack: (failed: string) => reason('EAS0075E', [failed], { attrName: 'allornothing' }),
  groupByNotServed: (parameter: string) => reason('EAS0112E', [parameter], { attrName: parameter }),

  invalidSite: (site: string, objPath: string) =>
    reason('BMXAA4153E', [site], { attrName: 'siteid', attrValue: site, objPath }),
  notInValueList: (title: string, value: string, attrName: string, objPath: string) =>
    reason('BMXAA4190E', [title, value], { attrName, attrValue: value, objPath }),
  invalidReference: (title: string, value: string, attrName: string, objPath: string) =>
    reason('BMXAA2661E', [title, value], { attrName, attrValue: value, objPath }),
  requiredField: (title: string, objectName: string, attrName: string, objPath: string) =>
    reason('BMXAA4195E', [title, objectName], { attrName, objPath }),
  duplicateKey: (keyText: string, objectName: string, objPath: string) =>
    reason('BMXAA4129E', [keyText], { objPath, attrValue: objectName }),
  wrongType: (title: string, value: string, expected: string, attrName: string, objPath: string) =>
    reason('EAS0010E', [title, value, expected], { attrName, attrValue: value, objPath }),
  tooLong: (title: string, length: number, attrName: string, objPath: string) =>
    reason('EAS0011E', [title, length], { attrName, objPath }),
  readOnlyAttribute: (title: string, attrName: string, objPath: string) =>
    reason('EAS0012E', [title], { attrName, objPath }),
  stillReferenced: (objectName: string, by: string) => reason('EAS0013E', [objectName, by]),
  outOfRange: (
    title: string,
    value: string,
    range: readonly [number, number],
    attrName: string,
    objPath: string,
  ) => reason('EAS0018E', [title, value, range[0], range[1]], { attrName, attrValue: value, objPath }),

  attachmentTooLarge: (limitMb: number) =>
    reason('EAS0220E', [limitMb], { attrName: 'mxe.doclink.maxfilesize', attrValue: limitMb }),
  /** A row names a file of the content folder and this process was started without the folder. */
  attachmentFolderMissing: (document: string) => reason('EAS0221E', [document]),
  /** A row names a file the content folder does not hold (a folder restored without it, or another folder). */
  attachmentFileMissing: (document: string) => reason('EAS0222E', [document]),

  updatedByAnotherUser: (objectName: string) => reason('BMXAA8229W', [objectName]),
  /** `If-Match` names another version than the stored one: the same condition as a stale `_rowstamp`, as 412. */
  preconditionFailed: (objectName: string) =>
    new MaximoError(
      'BMXAA8229W',
      REASONS.BMXAA8229W.text(objectName),
      { attrName: 'If-Match', objPath: objectName.toLowerCase() },
      412,
    ),
  duplicateTransaction: (transactionId: string, resource: string) =>
    reason('BMXAA9524E', [transactionId, resource], { attrName: 'transactionid', attrValue: transactionId }),
  childKeyIncomplete: (attrName: string, objectName: string) =>
    reason('EAS0090E', [attrName, objectName], { attrName, objPath: objectName.toLowerCase() }),
  childNotMatched: (keyText: string, attrName: string, objectName: string) =>
    reason('EAS0091E', [keyText, objectName], { attrName, objPath: objectName.toLowerCase() }),
  unknownAction: (action: string, objectStructure: string) =>
    reason('EAS0110E', [action, objectStructure], { attrName: 'action', attrValue: action }),
  statusTransitionRefused: (from: string, to: string, objPath: string) =>
    reason('EAS0111E', [from, to], { attrName: 'status', attrValue: to, objPath }),

  /** `getlist~<attr>` on an attribute that has neither a lookup nor a domain (src/lookups). */
  noValueList: (attrName: string, objectName: string) =>
    reason('EAS0050E', [attrName, objectName], { attrName, objPath: objectName.toLowerCase() }),
  setupDataNotObject: (value: string) => reason('EAS0051E', [], { attrName: 'setupdata', attrValue: value }),

  unknownProperty: (name: string) => reason('EAS0060E', [name], { attrName: 'propName', attrValue: name }),
  propertyValueNotValid: (name: string, value: string, type: string, why?: string) =>
    reason('EAS0061E', [name, value, type, why], {
      attrName: 'propValue',
      attrValue: value,
      objPath: 'maxpropvalue',
    }),
  propertyValueOutsideDomain: (name: string, value: string, why: string) =>
    reason('EAS0062E', [name, value, why], {
      attrName: 'propValue',
      attrValue: value,
      objPath: 'maxpropvalue',
    }),
  propertyValueRequired: (name: string) =>
    reason('EAS0063E', [name], { attrName: 'propValue', objPath: 'maxpropvalue' }),
  propertyNotChangeableOnline: (name: string) =>
    reason('EAS0064E', [name], { attrName: 'propName', attrValue: name }),
  propertyScope: (name: string, serverName: string, scope: 'global' | 'instance') =>
    reason('EAS0065E', [name, serverName, scope], { attrName: 'serverName', attrValue: serverName }),
  missingParameter: (name: string) => reason('EAS0066E', [name], { attrName: name }),
  unknownServiceMethod: (action: string, service: string) =>
    reason('EAS0067E', [action, service], { attrName: 'action', attrValue: action }),
  propertySecretKeyMissing: (name: string) =>
    reason('EAS0068E', [name], { attrName: 'propName', attrValue: name }),

  apiKeyNotValid: () => reason('BMXAA9549E', []),
  apiKeyExists: (userid: string) =>
    reason('BMXAA10051E', [], { attrName: 'userid', attrValue: userid, objPath: 'apikeytoken' }),
  apiKeySystemUser: (userid: string) =>
    reason('EAS0070E', [userid], { attrName: 'userid', attrValue: userid, objPath: 'apikeytoken' }),
  apiKeyOnlyForSelf: (userid: string) =>
    reason('EAS0071E', [userid], { attrName: 'userid', attrValue: userid, objPath: 'apikeytoken' }),
  apiKeyExternalRefused: () => reason('EAS0072E', [], { attrName: 'apikey', objPath: 'apikeytoken' }),
  apiKeyTooWeak: (why: string) => reason('EAS0073E', [why], { attrName: 'apikey', objPath: 'apikeytoken' }),
  apiKeyExpirationNotValid: (value: string) =>
    reason('EAS0074E', [value], { attrName: 'expiration', attrValue: value, objPath: 'apikeytoken' }),
  packageDefinitionNotFound: (name: string) =>
    reason('EAS0160E', [name], { attrName: 'pkgdefname', attrValue: name }),
  packageNotFound: (id: string, name: string) =>
    reason('EAS0161E', [id, name], { attrName: 'dmpackageid', attrValue: id }),
  packageStatusRefused: (id: string, status: string, operation: string) =>
    reason('EAS0162E', [id, status, operation], { attrName: 'dmpackageid', attrValue: id }),
  packageTargetNotFound: (target: string, name: string) =>
    reason('EAS0163E', [target, name], { attrName: 'targetname', attrValue: target }),
  packageFileRefused: (why: string, entry?: string) =>
    reason('EAS0164E', [why], { attrName: 'filename', ...(entry !== undefined && { attrValue: entry }) }),
  /** `remedy`: where to fix it; a record that names what this deployment lacks is fixed here (docs/migration.md). */
  packageRecordRefused: (
    objectStructure: string,
    key: string,
    why: string,
    attrName?: string,
    remedy = 'Fix the data and recreate the package.',
  ) =>
    reason('EAS0165E', [objectStructure, key, why, remedy], {
      ...(attrName !== undefined && { attrName }),
      attrValue: key,
      objPath: objectStructure.toLowerCase(),
    }),
  packageDefinitionRefused: (name: string, why: string) =>
    reason('EAS0166E', [name, why], { attrName: 'pkgdefname', attrValue: name }),
  packageTargetUnreachable: (target: string, why: string) =>
    reason('EAS0167E', [target, why], { attrName: 'targetname', attrValue: target }),
  packageDrifted: (objectStructure: string, key: string, count: number) =>
    reason('EAS0169E', [objectStructure, key, count], {
      attrValue: key,
      objPath: objectStructure.toLowerCase(),
    }),

  packageBackoutDrifted: (
    id: string,
    objectStructure: string,
    key: string,
    difference: string,
    count: number,
  ) =>
    reason('EAS0180E', [id, objectStructure, key, difference, count], {
      attrValue: key,
      objPath: objectStructure.toLowerCase(),
    }),
  packageBackedOut: (id: string, by: string, when: string) =>
    reason('EAS0181E', [id, by, when], { attrName: 'dmpackageid', attrValue: id }),
  packageWithoutInverse: (id: string) => reason('EAS0182E', [id], { attrName: 'dmpackageid', attrValue: id }),
  packageBackoutRefused: (objectStructure: string, key: string, why: string, attrName?: string) =>
    reason('EAS0183E', [objectStructure, key, why], {
      ...(attrName !== undefined && { attrName }),
      attrValue: key,
      objPath: objectStructure.toLowerCase(),
    }),

  objectNotConfigurable: (objectName: string) =>
    reason('EAS0170E', [objectName], {
      attrName: 'objectname',
      attrValue: objectName,
      objPath: 'maxattributecfg',
    }),
  attributeNameNotValid: (attrName: string) =>
    reason('EAS0171E', [attrName], {
      attrName: 'attributename',
      attrValue: attrName,
      objPath: 'maxattributecfg',
    }),
  attributeExists: (objectName: string, attrName: string) =>
    reason('EAS0172E', [objectName, attrName], {
      attrName: 'attributename',
      attrValue: attrName,
      objPath: 'maxattributecfg',
    }),
  notCustomAttribute: (objectName: string, attrName: string) =>
    reason('EAS0173E', [objectName, attrName], {
      attrName: 'attributename',
      attrValue: attrName,
      objPath: 'maxattributecfg',
    }),
  attributeChangeNotValid: (objectName: string, attrName: string, why: string) =>
    reason('EAS0174E', [objectName, attrName, why], {
      attrName: 'attributename',
      attrValue: attrName,
      objPath: 'maxattributecfg',
    }),
  configurationNotApplied: (objectName: string, attrName: string, changeType: string, why: string) =>
    reason('EAS0175E', [objectName, attrName, changeType, why], {
      attrName: 'attributename',
      attrValue: attrName,
      objPath: 'maxattributecfg',
    }),
  samlResponseRefused: (why: string) => reason('EAS0150E', [why], { attrName: 'SAMLResponse' }),
  samlAssertionReplayed: (assertionId: string) =>
    reason('EAS0151E', [assertionId], { attrName: 'SAMLResponse', attrValue: assertionId }),
  samlLogoutRefused: (why: string) => reason('EAS0193E', [why]),
  logoutTokenRefused: (why: string) => reason('EAS0194E', [why], { attrName: 'logout_token' }),

  federatedSignInRefused: (why: string) => reason('EAS0190E', [why]),
  federatedUserRefused: (userid: string) =>
    reason('EAS0191E', [userid], { attrName: 'userid', attrValue: userid }),
  identityProviderUnavailable: () => reason('EAS0192E', []),
  tooManySignInStarts: (seconds: number) => reason('EAS0195E', [seconds]),

  consoleNotBuilt: () => reason('EAS0200E', []),
  sessionNotFound: (sessionid: string) =>
    reason('EAS0201E', [sessionid], { attrName: 'sessionid', attrValue: sessionid }),

  /** A structural database change while admin mode is not on (state 1); `detail` names what was refused. */
  adminModeRequired: (detail?: ErrorDetail) => reason('BMXAA0578E', [], detail),
} as const;

export interface ErrorBodyOptions {
  /** Address of this service's error messages, `<base>/oslc/error/messages`, built from the route used. */
  messagesBase: string;
  lean: boolean;
}

export type ErrorBody = Record<string, unknown>;

export function errorBody(error: MaximoError, options: ErrorBodyOptions): ErrorBody {
  const href = `${options.messagesBase}/${error.reasonCode}`;
  const { attrName, attrValue, objPath } = error.detail;
  const status = String(error.status);
  if (!options.lean) {
    return {
      'oslc:Error': {
        'oslc:message': error.message,
        'spi:reasonCode': error.reasonCode,
        'oslc:statusCode': status,
        'oslc:extendedError': { 'oslc:moreInfo': { 'rdf:resource': href } },
        ...(attrName !== undefined && { 'spi:errorattrname': attrName }),
        ...(attrValue !== undefined && attrValue !== null && { 'spi:errattrvalue': String(attrValue) }),
        ...(objPath !== undefined && { 'spi:errorobjpath': objPath }),
      },
    };
  }
  return {
    Error: {
      ...(attrName !== undefined && { errorattrname: attrName }),
      extendedError: { moreInfo: { href } },
      ...(objPath !== undefined && { errorobjpath: objPath }),
      ...(attrValue !== undefined && attrValue !== null && { errattrvalue: String(attrValue) }),
      reasonCode: error.reasonCode,
      message: error.message,
      statusCode: status,
    },
  };
}
