/**
 * The welcome's example request (src/server.ts): with the generated password's `maxauth` value when it is shown;
 * else the shell builds it from `EAS_ADMIN_PASSWORD`, and when that is not set in the reader's shell the line stops
 * with a sentence saying so instead of sending an empty password (a 401).
 */
export function exampleRequest(base: string, generatedPassword: string | undefined): string {
  const url = `'${base}/oslc/os/mxapiasset?lean=1&oslc.select=assetnum,status&oslc.pageSize=2'`;
  if (generatedPassword !== undefined)
    return `curl -H "maxauth: ${Buffer.from(`MAXADMIN:${generatedPassword}`).toString('base64')}" ${url}`;
  return (
    ': "${EAS_ADMIN_PASSWORD:?set EAS_ADMIN_PASSWORD to the MAXADMIN password}" && ' +
    `curl -H "maxauth: $(printf 'MAXADMIN:%s' "$EAS_ADMIN_PASSWORD" | base64)" ${url}`
  );
}
