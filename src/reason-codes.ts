/**
 * The closed table of reason codes (docs/errors.md): each code with its HTTP status and message text. The one place
 * a code is declared; `errors.ts` builds the errors from it. A new code is a new entry in its domain's group here,
 * a factory in `errors.ts`, and a line in docs/errors.md.
 */
/** One entry of the reason table: the HTTP status the code is answered with, and its message text. */
export interface Reason {
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
  /** A browser's request from a page of another origin, or a form sent to a JSON route (src/auth/browser-origin.ts). */
  EAS0042E: {
    status: 403,
    text: (cause: string) => `The request is not accepted from a browser: ${cause}.`,
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
  EAS0024E: {
    status: 404,
    text: (objectStructure: string, child: string, id: string) =>
      `The object structure ${objectStructure} has no child collection ${child}; the resource ${id} exists.`,
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
    text: (objectStructure: string, key: string, reason: string, remedy: string) =>
      `The package cannot be deployed: the record ${key} of ${objectStructure} fails the target's rules: ${reason} ${remedy}`,
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

  // Back-out of deployed packages (src/migration/backout, docs/migration.md "Back-out").
  EAS0180E: {
    status: 409,
    text: (id: string, objectStructure: string, key: string, difference: string, count: number) =>
      `The package ${id} cannot be backed out: the record ${key} of ${objectStructure} was changed since the deploy (${difference}; ${count} record(s) changed); nothing was backed out. Back out with "force": true to restore the records anyway.`,
  },
  EAS0181E: {
    status: 409,
    text: (id: string, by: string, when: string) =>
      `The package ${id} was already backed out, by ${by} at ${when}; a package is backed out once.`,
  },
  EAS0182E: {
    status: 400,
    text: (id: string) =>
      `The package ${id} has no inverse package to back it out with: it was deployed before back-out was captured, or not on this deployment.`,
  },
  EAS0183E: {
    status: 400,
    text: (objectStructure: string, key: string, reason: string) =>
      `The package cannot be backed out: restoring the record ${key} of ${objectStructure} fails the rules of this deployment: ${reason} Nothing was backed out.`,
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
  EAS0195E: {
    status: 429,
    text: (seconds: number) =>
      `Too many sign-ins were started from this address, or are waiting for the identity provider. Try again in ${seconds} seconds.`,
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

  // Backup (src/backup, docs/operations.md "Backup and restore").
  EAS0210E: {
    status: 409,
    text: (why: string) => `This deployment cannot be backed up through the API: ${why}.`,
  },

  // Attachments (src/attachments, docs/compatibility.md "Attachments").
  EAS0220E: {
    status: 413,
    text: (limitMb: number) =>
      `The attachment is larger than the limit of ${limitMb} MB that the mxe.doclink.maxfilesize property sets.`,
  },
  EAS0221E: {
    status: 500,
    text: (document: string) =>
      `The content of the attachment ${document} is kept in a file, and this server has no attachment folder (EAS_ATTACHMENTS_DIR).`,
  },
  EAS0222E: {
    status: 500,
    text: (document: string) =>
      `The content of the attachment ${document} is kept in a file that is missing from the attachment folder.`,
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
