import { errors } from '../errors.js';
import type { ObjectStructure } from '../metadata/registry.js';
import type { WriteRuleContext, WriteRules } from '../oslc/write-extensions.js';

/**
 * The write rules of `OSAUTH` (a group's rights, the child `osauth` of MXAPIGROUP): only administrators grant
 * rights, whatever rights on MXAPIGROUP a caller holds, and a right names an object structure this service serves,
 * stored under its own name (an alias names the same structure), as the rights check reads it (src/auth/README.md).
 */
export function rightsWriteRules(
  findObjectStructure: (name: string) => ObjectStructure | undefined,
): WriteRules {
  const check = ({ user, values }: WriteRuleContext): Promise<void> => {
    if (!user.isAdmin) throw errors.actionNotAllowed('grant rights', 'OSAUTH');
    if (typeof values.objectstructure === 'string') {
      const structure = findObjectStructure(values.objectstructure);
      if (!structure)
        throw errors.badRequest(`The object structure ${values.objectstructure} does not exist.`, {
          attrName: 'objectstructure',
          attrValue: values.objectstructure,
          objPath: 'osauth',
        });
      values.objectstructure = structure.name;
    }
    return Promise.resolve();
  };
  return { beforeInsert: check, beforeUpdate: check };
}
