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

/** One entry of the reason table: the HTTP status the code is answered with, and its message text. */
interface Reason {
  readonly status: number;
  /** Message text without the reason-code prefix: fixed, or built from the values it names. */
  readonly text: string | ((...values: never[]) => string);
}

/**
 * Every reason code the service sends, closed: a code not in this table cannot be thrown. `BMXAA` codes are the
 * ones real deployments send, with their texts; `EAS` codes are this service's own, for conditions the deployed
 * systems document no code for. docs/errors.md lists every code with its cause (a test keeps the two equal).
 */
export const REASONS = {
  // Authentication, sessions and rights (src/auth, docs/security.md).
  BMXAA7901E: { status: 401, text: 'You cannot log in at this time. Contact the system administrator.' },
  /** A session cookie that names no live session (expired, logged out, unknown): clients log in again on it. */
  BMXAA0021E: { status: 401, text: 'User name and password combination are not valid. Try again.' },
  BMXAA9301E: {
    status: 400,
    text: (objectStructure: string) =>
      `The user of the transaction is not authorized for Object Structure ${objectStructure}. Configure authorization in the object structure application and grant necessary access to the user.`,
  },
  BMXAA0024E: {
    status: 400,
    text: (action: string, objectName: string) =>
      `The action ${action} is not allowed on object ${objectName}. Verify the business rules for the object and define the appropriate action for the object.`,
  },
  EAS0040E: {
    status: 403,
    text: 'The request is not accepted: the csrftoken header does not match the token of this session.',
  },
  EAS0041E: {
    status: 401,
    text: (scheme: string) =>
      `The login scheme ${scheme} is not available in this deployment. Use an API key or the login of the platform.`,
  },
  /** A monitoring (MMI) endpoint for a caller who is not an administrator; clients take it as "no permission". */
  BMXAA9051E: {
    status: 400,
    text: (element: string) =>
      `You are not authorized to view the management metrics that are identified by the URI path element ${element}.`,
  },

  // Requests the HTTP layer refuses (src/http, src/app.ts).
  EAS0001E: {
    status: 404,
    text: (method: string, path: string) => `No resource is served at ${method} ${path}.`,
  },
  EAS0003E: { status: 400, text: 'The request body is not valid JSON.' },
  /** The catch-all client error: the text says what is wrong. */
  EAS0004E: { status: 400, text: (text: string) => text },
  EAS0005E: {
    status: 413,
    text: (limit: number) => `The request body is larger than the limit of ${limit} bytes.`,
  },
  EAS0006E: { status: 415, text: (type: string) => `The content type ${type} is not supported here.` },
  EAS0007E: {
    status: 405,
    text: (method: string) => `The method ${method} is not allowed on this resource.`,
  },

  // Faults and limits of the process (docs/operations.md).
  EAS0500E: { status: 500, text: 'An internal error occurred. The server log has the details.' },
  EAS0503E: {
    status: 503,
    text: 'The database cannot be reached at the moment, so the request was not completed. Try it again shortly.',
  },
  EAS0408E: {
    status: 408,
    text: (headersSeconds: number, requestSeconds: number) =>
      `The request did not arrive in time: the limits are ${headersSeconds} seconds for the headers and ${requestSeconds} seconds for the whole request.`,
  },
  EAS0431E: {
    status: 431,
    text: (limit: number) => `The request line and headers are larger than the limit of ${limit} bytes.`,
  },
  EAS0417E: {
    status: 417,
    text: (value: string) => `The Expect header ${value} is not supported; only 100-continue is.`,
  },

  // Object structures and their queries (src/oslc, src/oslc/query).
  BMXAA8727E: {
    status: 404,
    text: (objectStructure: string, id: string) =>
      `The OSLC resource ${objectStructure} with the ID ${id} was not found as it does not exist in the system. In the database, verify whether the resource for the ID exists.`,
  },
  EAS0002E: { status: 404, text: (name: string) => `The object structure ${name} does not exist.` },
  BMXAA8744E: {
    status: 400,
    text: (detail: string) =>
      `The OSLC query was not parsed. Ensure that the query in the HTTP request follows the correct syntax of the OSLC query specification. ${detail}`,
  },
  EAS0020E: {
    status: 400,
    text: (name: string, objectName: string) =>
      `The attribute ${name} does not exist on the object ${objectName}.`,
  },
  EAS0021E: {
    status: 400,
    text: (value: string, attrName: string, type: string) =>
      `The value ${value} is not valid for the attribute ${attrName} of type ${type}.`,
  },
  EAS0022E: {
    status: 400,
    text: (stableId: string) =>
      `The stable page set ${stableId} does not exist or has expired. Run the query again with stablepaging=1.`,
  },
  EAS0023E: {
    status: 400,
    text: (name: string, objectStructure: string) =>
      `The saved query ${name} does not exist for ${objectStructure}.`,
  },
  EAS0112E: {
    status: 400,
    text: (parameter: string) => `The group-by parameter ${parameter} is not served.`,
  },

  // Writes: validation of the values sent (src/oslc/validation.ts).
  BMXAA4153E: {
    status: 400,
    text: (site: string) =>
      `${site} is not a valid site. Enter a valid Site value as defined in the Organization Application.`,
  },
  BMXAA4190E: {
    status: 400,
    text: (title: string, value: string) => `${title} ${value} is not in the value list.`,
  },
  BMXAA2661E: {
    status: 400,
    text: (title: string, value: string) => `${title} ${value} is not a valid ${title.toLowerCase()}.`,
  },
  BMXAA4195E: {
    status: 400,
    text: (title: string, objectName: string) =>
      `A value is required for the ${title} field on the ${objectName} object.`,
  },
  BMXAA4129E: {
    status: 400,
    text: (keyText: string) =>
      `Record already exists for ${keyText}. Ensure that the key value for the given record is unique.`,
  },
  EAS0010E: {
    status: 400,
    text: (title: string, value: string, expected: string) =>
      `${title} ${value} is not a valid ${expected} value.`,
  },
  EAS0011E: {
    status: 400,
    text: (title: string, length: number) => `${title} cannot be longer than ${length} characters.`,
  },
  EAS0012E: { status: 400, text: (title: string) => `${title} is read-only and cannot be changed.` },
  EAS0013E: {
    status: 400,
    text: (objectName: string, by: string) =>
      `The ${objectName} record cannot be deleted because ${by} records refer to it.`,
  },
  EAS0018E: {
    status: 400,
    text: (title: string, value: string, low: number, high: number) =>
      `${title} ${value} is outside the range of the attribute, ${low} to ${high}.`,
  },

  // Writes: concurrency, child collections, BULK and SYNC, transaction ids, actions (docs/compatibility.md).
  /** 409 for a stale `_rowstamp`; an `If-Match` that names another version answers 412 with it. */
  BMXAA8229W: {
    status: 409,
    text: (objectName: string) =>
      `Record ${objectName} has been updated by another user. Refresh the record and try again.`,
  },
  BMXAA9524E: {
    status: 409,
    text: (transactionId: string, resource: string) =>
      `The transaction ID ${transactionId} already exists in the OSLC transaction table with resource ID ${resource}.`,
  },
  EAS0090E: {
    status: 400,
    text: (attrName: string, objectName: string) =>
      `The child ${objectName} cannot be matched: its key attribute ${attrName} is missing.`,
  },
  EAS0091E: {
    status: 400,
    text: (keyText: string, objectName: string) =>
      `No ${objectName} child with ${keyText} exists, so it cannot be deleted or changed.`,
  },
  EAS0110E: {
    status: 400,
    text: (action: string, objectStructure: string) =>
      `The action ${action} is not served on ${objectStructure}.`,
  },
  EAS0111E: {
    status: 400,
    text: (from: string, to: string) => `The status cannot change from ${from} to ${to}.`,
  },

  // Lookups (src/lookups, docs/lookups.md).
  EAS0050E: {
    status: 400,
    text: (attrName: string, objectName: string) =>
      `The attribute ${attrName} of the object ${objectName} has no value list.`,
  },
  EAS0051E: {
    status: 400,
    text: 'The parameter setupdata must be a JSON object of attribute names and values.',
  },

  // System properties and the system service (src/properties, docs/properties.md).
  EAS0060E: { status: 404, text: (name: string) => `The system property ${name} does not exist.` },
  EAS0061E: {
    status: 400,
    text: (name: string, value: string, type: string, reason?: string) =>
      `The value ${value} is not a valid ${type} value for the system property ${name}${reason ? `: ${reason}` : ''}.`,
  },
  EAS0062E: {
    status: 400,
    text: (name: string, value: string, reason: string) =>
      `The value ${value} is not allowed for the system property ${name}: ${reason}.`,
  },
  EAS0063E: { status: 400, text: (name: string) => `The system property ${name} requires a value.` },
  EAS0064E: {
    status: 400,
    text: (name: string) =>
      `The system property ${name} cannot be changed while the service runs. Change it in the database and restart the servers.`,
  },
  EAS0065E: {
    status: 400,
    text: (name: string, serverName: string, scope: 'global' | 'instance') =>
      scope === 'global'
        ? `The system property ${name} is global only: set it for the server COMMON, not ${serverName}.`
        : `The system property ${name} is instance only: set it for a named server, not COMMON.`,
  },
  EAS0066E: { status: 400, text: (name: string) => `The query parameter ${name} is required.` },
  EAS0067E: {
    status: 400,
    text: (action: string, service: string) =>
      `The action ${action} is not a method of the service ${service}.`,
  },
  EAS0068E: {
    status: 400,
    text: (name: string) =>
      `The system property ${name} is encrypted, and no EAS_SECRET_KEY is configured to encrypt its value.`,
  },

  // API keys (src/apikeys, docs/apikeys.md).
  BMXAA9549E: {
    status: 400,
    text: 'The API key token is not valid. It does not exist, it was revoked, or it has expired.',
  },
  BMXAA10051E: { status: 400, text: 'Only one API key allowed per user.' },
  EAS0070E: {
    status: 400,
    text: (userid: string) =>
      `The user ${userid} is listed in mxe.apikeysysusers and cannot get an API key through MXAPIAPIKEY. The user can create a key with /apitoken/create.`,
  },
  EAS0071E: {
    status: 400,
    text: (userid: string) =>
      `API keys can only be created by their own user (mxe.apikeyforloggedinuser is 1): the key for ${userid} cannot be created by another user.`,
  },
  EAS0072E: {
    status: 400,
    text: 'Externally generated API key values are not allowed (mxe.allowexternalapikey is 0). Leave apikey out to have one generated.',
  },
  EAS0073E: {
    status: 400,
    text: (reason: string) => `The API key value sent is not strong enough: ${reason}.`,
  },
  EAS0074E: {
    status: 400,
    text: (value: string) =>
      `The expiration ${value} is not valid: give the minutes until the key expires (a whole number above 0), or -1 for never.`,
  },
  // BULK with `allornothing: 1` (src/oslc/bulk.ts, docs/compatibility.md "BULK and SYNC").
  EAS0075E: {
    status: 400,
    text: (failed: string) =>
      `Not written: element ${failed} of this all-or-nothing BULK request failed, so no element was written.`,
  },
  // Migration packages (src/migration, docs/migration.md).
  EAS0160E: {
    status: 404,
    text: (name: string) => `The package definition ${name} does not exist.`,
  },
  EAS0161E: {
    status: 404,
    text: (id: string, name: string) => `The package ${id} of the package definition ${name} does not exist.`,
  },
  EAS0162E: {
    status: 400,
    text: (id: string, status: string, operation: string) =>
      `The package ${id} has the status ${status}, in which ${operation} is not possible.`,
  },
  EAS0163E: {
    status: 400,
    text: (target: string, name: string) =>
      `The package definition ${name} has no distribution target ${target}.`,
  },
  EAS0164E: {
    status: 400,
    text: (reason: string) => `The package file is refused: ${reason}.`,
  },
  EAS0165E: {
    status: 400,
    text: (objectStructure: string, key: string, reason: string) =>
      `The package cannot be deployed: the record ${key} of ${objectStructure} fails the target's rules: ${reason} Fix the data and recreate the package.`,
  },
  EAS0166E: {
    status: 400,
    text: (name: string, reason: string) => `The package definition ${name} cannot be used: ${reason}.`,
  },
  EAS0167E: {
    status: 502,
    text: (target: string, reason: string) =>
      `The package could not be written to the database of the target ${target}: ${reason}.`,
  },
  EAS0169E: {
    status: 409,
    text: (objectStructure: string, key: string, count: number) =>
      `The package cannot be deployed: the record ${key} of ${objectStructure} was changed on this deployment since it was last in step with the source (${count} record(s) drifted); nothing was deployed. Deploy with "force": true to overwrite the changes.`,
  },

  // Database configuration: custom attributes staged and applied (src/dbconfig, docs/dbconfig.md).
  EAS0170E: {
    status: 400,
    text: (objectName: string) =>
      `The object ${objectName} cannot be configured: it is not a business object whose attributes can be added.`,
  },
  EAS0171E: {
    status: 400,
    text: (attrName: string) =>
      `The attribute name ${attrName} is not valid: use a letter followed by letters, digits or underscores, 30 characters at most.`,
  },
  EAS0172E: {
    status: 400,
    text: (objectName: string, attrName: string) =>
      `The attribute ${attrName} already exists on the object ${objectName}.`,
  },
  EAS0173E: {
    status: 400,
    text: (objectName: string, attrName: string) =>
      `The attribute ${attrName} of the object ${objectName} is not a custom attribute in force, so it cannot be changed or removed.`,
  },
  EAS0174E: {
    status: 400,
    text: (objectName: string, attrName: string, why: string) =>
      `The change of the attribute ${attrName} of the object ${objectName} is not valid: ${why}.`,
  },
  EAS0175E: {
    status: 400,
    text: (objectName: string, attrName: string, changeType: string, why: string) =>
      `The configuration changes were not applied, and nothing was changed: ${changeType} of the attribute ${attrName} of the object ${objectName} failed, as ${why}.`,
  },

  // SAML sign-in (src/auth/saml, docs/federated-login.md).
  EAS0150E: {
    status: 401,
    text: (reason: string) => `The SAML response is refused: ${reason}. Sign in again.`,
  },
  EAS0151E: {
    status: 401,
    text: (assertionId: string) =>
      `The SAML assertion ${assertionId} was used already; an assertion signs in once. Sign in again.`,
  },
  EAS0193E: {
    status: 400,
    text: (reason: string) => `The SAML logout message is refused: ${reason}.`,
  },
  EAS0194E: {
    status: 400,
    text: (reason: string) => `The logout token is refused: ${reason}.`,
  },

  // Federated login: OIDC and SAML (src/auth/federated, docs/federated-login.md).
  EAS0190E: {
    status: 401,
    text: (why: string) => `The sign-in through the identity provider was not accepted: ${why}.`,
  },
  EAS0191E: {
    status: 401,
    text: (userid: string) =>
      `The identity provider signed in ${userid}, who is not an active user of this service. Ask an administrator to create the user.`,
  },
  EAS0192E: {
    status: 502,
    text: 'The identity provider could not be reached or gave an answer that cannot be used. Try again later.',
  },

  // The console and the sessions it lists (src/console, src/activesessions, docs/console.md).
  EAS0200E: {
    status: 503,
    text: 'The console is not built in this installation: run npm install (or npm run build) to build it.',
  },
  EAS0201E: {
    status: 404,
    text: (sessionid: string) => `The session ${sessionid} does not exist or has already ended.`,
  },

  // Admin mode (src/adminmode, docs/adminmode.md).
  BMXAA0578E: {
    status: 400,
    text: 'You must turn on Admin Mode before performing a structural database configuration.',
  },
} as const satisfies Record<string, Reason>;

export type ReasonCode = keyof typeof REASONS;

/** Whether `code` is one of the service's reason codes. */
export function isReasonCode(code: string): code is ReasonCode {
  return Object.hasOwn(REASONS, code);
}

/** The values a code's text is built from, in order; none for a fixed text. */
export type ReasonValues<C extends ReasonCode> = (typeof REASONS)[C]['text'] extends (
  ...values: infer V
) => string
  ? V
  : [];

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
  loginSchemeNotAvailable: (scheme: string) => reason('EAS0041E', [scheme]),
  notAuthorized: (objectStructure: string) => reason('BMXAA9301E', [objectStructure]),
  actionNotAllowed: (action: string, objectName: string) => reason('BMXAA0024E', [action, objectName]),
  monitoringNotAuthorized: (element: string) => reason('BMXAA9051E', [element]),

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
  packageRecordRefused: (objectStructure: string, key: string, why: string, attrName?: string) =>
    reason('EAS0165E', [objectStructure, key, why], {
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
