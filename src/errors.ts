/**
 * The error contract (maximo-notes §3): every failure leaves the service as one error object whose `statusCode`
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
  constructor(
    readonly status: number,
    readonly reasonCode: string,
    /** Message text without the reason-code prefix. */
    readonly text: string,
    readonly detail: ErrorDetail = {},
  ) {
    super(`${reasonCode} - ${text}`);
    this.name = 'MaximoError';
  }
}

export function isMaximoError(value: unknown): value is MaximoError {
  return value instanceof MaximoError;
}

/**
 * Reason codes. `BMXAA` codes are the ones real deployments send (maximo-notes §3.2); `EAS` codes are this service's
 * own, for conditions the deployed systems document no code for (see docs/errors.md).
 */
export const errors = {
  notLoggedIn: () =>
    new MaximoError(401, 'BMXAA7901E', 'You cannot log in at this time. Contact the system administrator.'),
  /** A session cookie that names no live session (expired, logged out, unknown): clients log in again on it. */
  sessionNotValid: () =>
    new MaximoError(401, 'BMXAA0021E', 'User name and password combination are not valid. Try again.'),
  csrfTokenInvalid: () =>
    new MaximoError(
      403,
      'EAS0040E',
      'The request is not accepted: the csrftoken header does not match the token of this session.',
    ),
  loginSchemeNotAvailable: (scheme: string) =>
    new MaximoError(
      401,
      'EAS0041E',
      `The login scheme ${scheme} is not available in this deployment. Use an API key or the login of the platform.`,
    ),
  notAuthorized: (objectStructure: string) =>
    new MaximoError(
      400,
      'BMXAA9301E',
      `The user of the transaction is not authorized for Object Structure ${objectStructure}. Configure authorization in the object structure application and grant necessary access to the user.`,
    ),
  actionNotAllowed: (action: string, objectName: string) =>
    new MaximoError(
      400,
      'BMXAA0024E',
      `The action ${action} is not allowed on object ${objectName}. Verify the business rules for the object and define the appropriate action for the object.`,
    ),
  resourceNotFound: (objectStructure: string, id: string) =>
    new MaximoError(
      404,
      'BMXAA8727E',
      `The OSLC resource ${objectStructure} with the ID ${id} was not found as it does not exist in the system. In the database, verify whether the resource for the ID exists.`,
    ),
  unknownObjectStructure: (name: string) =>
    new MaximoError(404, 'EAS0002E', `The object structure ${name} does not exist.`),
  routeNotFound: (method: string, path: string) =>
    new MaximoError(404, 'EAS0001E', `No resource is served at ${method} ${path}.`),
  malformedJson: () => new MaximoError(400, 'EAS0003E', 'The request body is not valid JSON.'),
  badRequest: (text: string, detail?: ErrorDetail) => new MaximoError(400, 'EAS0004E', text, detail),
  bodyTooLarge: (limit: number) =>
    new MaximoError(413, 'EAS0005E', `The request body is larger than the limit of ${limit} bytes.`),
  unsupportedMediaType: (type: string) =>
    new MaximoError(415, 'EAS0006E', `The content type ${type} is not supported here.`),
  methodNotAllowed: (method: string) =>
    new MaximoError(405, 'EAS0007E', `The method ${method} is not allowed on this resource.`),
  /** `getlist~<attr>` on an attribute that has neither a lookup nor a domain (src/lookups). */
  noValueList: (attrName: string, objectName: string) =>
    new MaximoError(
      400,
      'EAS0050E',
      `The attribute ${attrName} of the object ${objectName} has no value list.`,
      { attrName, objPath: objectName.toLowerCase() },
    ),
  setupDataNotObject: (value: string) =>
    new MaximoError(
      400,
      'EAS0051E',
      'The parameter setupdata must be a JSON object of attribute names and values.',
      { attrName: 'setupdata', attrValue: value },
    ),
  internal: () =>
    new MaximoError(500, 'EAS0500E', 'An internal error occurred. The server log has the details.'),
  queryNotParsed: (detail: string) =>
    new MaximoError(
      400,
      'BMXAA8744E',
      `The OSLC query was not parsed. Ensure that the query in the HTTP request follows the correct syntax of the OSLC query specification. ${detail}`,
    ),
  stablePageSetGone: (stableId: string) =>
    new MaximoError(
      400,
      'EAS0022E',
      `The stable page set ${stableId} does not exist or has expired. Run the query again with stablepaging=1.`,
      { attrName: 'stableId', attrValue: stableId },
    ),
  unknownSavedQuery: (name: string, objectStructure: string) =>
    new MaximoError(400, 'EAS0023E', `The saved query ${name} does not exist for ${objectStructure}.`, {
      attrName: 'savedQuery',
      attrValue: name,
    }),
  invalidSite: (site: string, objPath: string) =>
    new MaximoError(
      400,
      'BMXAA4153E',
      `${site} is not a valid site. Enter a valid Site value as defined in the Organization Application.`,
      { attrName: 'siteid', attrValue: site, objPath },
    ),
  notInValueList: (title: string, value: string, attrName: string, objPath: string) =>
    new MaximoError(400, 'BMXAA4190E', `${title} ${value} is not in the value list.`, {
      attrName,
      attrValue: value,
      objPath,
    }),
  invalidReference: (title: string, value: string, attrName: string, objPath: string) =>
    new MaximoError(400, 'BMXAA2661E', `${title} ${value} is not a valid ${title.toLowerCase()}.`, {
      attrName,
      attrValue: value,
      objPath,
    }),
  requiredField: (title: string, objectName: string, attrName: string, objPath: string) =>
    new MaximoError(
      400,
      'BMXAA4195E',
      `A value is required for the ${title} field on the ${objectName} object.`,
      {
        attrName,
        objPath,
      },
    ),
  wrongType: (title: string, value: string, expected: string, attrName: string, objPath: string) =>
    new MaximoError(400, 'EAS0010E', `${title} ${value} is not a valid ${expected} value.`, {
      attrName,
      attrValue: value,
      objPath,
    }),
  tooLong: (title: string, length: number, attrName: string, objPath: string) =>
    new MaximoError(400, 'EAS0011E', `${title} cannot be longer than ${length} characters.`, {
      attrName,
      objPath,
    }),
  duplicateKey: (keyText: string, objectName: string, objPath: string) =>
    new MaximoError(
      400,
      'BMXAA4129E',
      `Record already exists for ${keyText}. Ensure that the key value for the given record is unique.`,
      { objPath, attrValue: objectName },
    ),
  readOnlyAttribute: (title: string, attrName: string, objPath: string) =>
    new MaximoError(400, 'EAS0012E', `${title} is read-only and cannot be changed.`, { attrName, objPath }),
  stillReferenced: (objectName: string, by: string) =>
    new MaximoError(
      400,
      'EAS0013E',
      `The ${objectName} record cannot be deleted because ${by} records refer to it.`,
    ),
  updatedByAnotherUser: (objectName: string) =>
    new MaximoError(
      409,
      'BMXAA8229W',
      `Record ${objectName} has been updated by another user. Refresh the record and try again.`,
    ),
  // System properties (src/properties, docs/properties.md).
  unknownProperty: (name: string) =>
    new MaximoError(404, 'EAS0060E', `The system property ${name} does not exist.`, {
      attrName: 'propName',
      attrValue: name,
    }),
  propertyValueNotValid: (name: string, value: string, type: string, reason?: string) =>
    new MaximoError(
      400,
      'EAS0061E',
      `The value ${value} is not a valid ${type} value for the system property ${name}${reason ? `: ${reason}` : ''}.`,
      { attrName: 'propValue', attrValue: value, objPath: 'maxpropvalue' },
    ),
  propertyValueOutsideDomain: (name: string, value: string, reason: string) =>
    new MaximoError(
      400,
      'EAS0062E',
      `The value ${value} is not allowed for the system property ${name}: ${reason}.`,
      {
        attrName: 'propValue',
        attrValue: value,
        objPath: 'maxpropvalue',
      },
    ),
  propertyValueRequired: (name: string) =>
    new MaximoError(400, 'EAS0063E', `The system property ${name} requires a value.`, {
      attrName: 'propValue',
      objPath: 'maxpropvalue',
    }),
  propertyNotChangeableOnline: (name: string) =>
    new MaximoError(
      400,
      'EAS0064E',
      `The system property ${name} cannot be changed while the service runs. Change it in the database and restart the servers.`,
      { attrName: 'propName', attrValue: name },
    ),
  propertyScope: (name: string, serverName: string, scope: 'global' | 'instance') =>
    new MaximoError(
      400,
      'EAS0065E',
      scope === 'global'
        ? `The system property ${name} is global only: set it for the server COMMON, not ${serverName}.`
        : `The system property ${name} is instance only: set it for a named server, not COMMON.`,
      { attrName: 'serverName', attrValue: serverName },
    ),
  missingParameter: (name: string) =>
    new MaximoError(400, 'EAS0066E', `The query parameter ${name} is required.`, { attrName: name }),
  unknownServiceMethod: (action: string, service: string) =>
    new MaximoError(400, 'EAS0067E', `The action ${action} is not a method of the service ${service}.`, {
      attrName: 'action',
      attrValue: action,
    }),
  // API keys (src/apikeys, docs/apikeys.md).
  apiKeyNotValid: () =>
    new MaximoError(
      400,
      'BMXAA9549E',
      'The API key token is not valid. It does not exist, it was revoked, or it has expired.',
    ),
  apiKeyExists: (userid: string) =>
    new MaximoError(400, 'BMXAA10051E', 'Only one API key allowed per user.', {
      attrName: 'userid',
      attrValue: userid,
      objPath: 'apikeytoken',
    }),
  apiKeySystemUser: (userid: string) =>
    new MaximoError(
      400,
      'EAS0070E',
      `The user ${userid} is listed in mxe.apikeysysusers and cannot get an API key through MXAPIAPIKEY. The user can create a key with /apitoken/create.`,
      { attrName: 'userid', attrValue: userid, objPath: 'apikeytoken' },
    ),
  apiKeyOnlyForSelf: (userid: string) =>
    new MaximoError(
      400,
      'EAS0071E',
      `API keys can only be created by their own user (mxe.apikeyforloggedinuser is 1): the key for ${userid} cannot be created by another user.`,
      { attrName: 'userid', attrValue: userid, objPath: 'apikeytoken' },
    ),
  apiKeyExternalRefused: () =>
    new MaximoError(
      400,
      'EAS0072E',
      'Externally generated API key values are not allowed (mxe.allowexternalapikey is 0). Leave apikey out to have one generated.',
      { attrName: 'apikey', objPath: 'apikeytoken' },
    ),
  apiKeyTooWeak: (reason: string) =>
    new MaximoError(400, 'EAS0073E', `The API key value sent is not strong enough: ${reason}.`, {
      attrName: 'apikey',
      objPath: 'apikeytoken',
    }),
  apiKeyExpirationNotValid: (value: string) =>
    new MaximoError(
      400,
      'EAS0074E',
      `The expiration ${value} is not valid: give the minutes until the key expires (a whole number above 0), or -1 for never.`,
      { attrName: 'expiration', attrValue: value, objPath: 'apikeytoken' },
    ),
  propertySecretKeyMissing: (name: string) =>
    new MaximoError(
      400,
      'EAS0068E',
      `The system property ${name} is encrypted, and no EAS_SECRET_KEY is configured to encrypt its value.`,
      { attrName: 'propName', attrValue: name },
    ),
  // Faults and limits of the process (docs/operations.md).
  databaseUnavailable: () =>
    new MaximoError(
      503,
      'EAS0503E',
      'The database cannot be reached at the moment, so the request was not completed. Try it again shortly.',
    ),
  requestTimeout: (headersSeconds: number, requestSeconds: number) =>
    new MaximoError(
      408,
      'EAS0408E',
      `The request did not arrive in time: the limits are ${headersSeconds} seconds for the headers and ${requestSeconds} seconds for the whole request.`,
    ),
  headersTooLarge: (limit: number) =>
    new MaximoError(
      431,
      'EAS0431E',
      `The request line and headers are larger than the limit of ${limit} bytes.`,
    ),
  expectationFailed: (value: string) =>
    new MaximoError(417, 'EAS0417E', `The Expect header ${value} is not supported; only 100-continue is.`, {
      attrName: 'expect',
      attrValue: value,
    }),
  outOfRange: (
    title: string,
    value: string,
    range: readonly [number, number],
    attrName: string,
    objPath: string,
  ) =>
    new MaximoError(
      400,
      'EAS0018E',
      `${title} ${value} is outside the range of the attribute, ${range[0]} to ${range[1]}.`,
      { attrName, attrValue: value, objPath },
    ),
  /** A monitoring (MMI) endpoint for a caller who is not an administrator; clients take it as "no permission". */
  monitoringNotAuthorized: (element: string) =>
    new MaximoError(
      400,
      'BMXAA9051E',
      `You are not authorized to view the management metrics that are identified by the URI path element ${element}.`,
    ),
  // Child collections, BULK and SYNC, transaction ids and ETags (docs/compatibility.md, "Writes").
  duplicateTransaction: (transactionId: string, resource: string) =>
    new MaximoError(
      409,
      'BMXAA9524E',
      `The transaction ID ${transactionId} already exists in the OSLC transaction table with resource ID ${resource}.`,
      { attrName: 'transactionid', attrValue: transactionId },
    ),
  /** `If-Match` names another version than the stored one: the same condition as a stale `_rowstamp`. */
  preconditionFailed: (objectName: string) =>
    new MaximoError(
      412,
      'BMXAA8229W',
      `Record ${objectName} has been updated by another user. Refresh the record and try again.`,
      { attrName: 'If-Match', objPath: objectName.toLowerCase() },
    ),
  childKeyIncomplete: (attrName: string, objectName: string) =>
    new MaximoError(
      400,
      'EAS0090E',
      `The child ${objectName} cannot be matched: its key attribute ${attrName} is missing.`,
      { attrName, objPath: objectName.toLowerCase() },
    ),
  childNotMatched: (keyText: string, attrName: string, objectName: string) =>
    new MaximoError(
      400,
      'EAS0091E',
      `No ${objectName} child with ${keyText} exists, so it cannot be deleted or changed.`,
      { attrName, objPath: objectName.toLowerCase() },
    ),
  unknownAction: (action: string, objectStructure: string) =>
    new MaximoError(400, 'EAS0110E', `The action ${action} is not served on ${objectStructure}.`, {
      attrName: 'action',
      attrValue: action,
    }),
  statusTransitionRefused: (from: string, to: string, objPath: string) =>
    new MaximoError(400, 'EAS0111E', `The status cannot change from ${from} to ${to}.`, {
      attrName: 'status',
      attrValue: to,
      objPath,
    }),
  groupByNotServed: (parameter: string) =>
    new MaximoError(400, 'EAS0112E', `The group-by parameter ${parameter} is not served.`, {
      attrName: parameter,
    }),
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
