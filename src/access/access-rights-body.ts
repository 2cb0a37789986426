import type { ErrorObject, ValidateFunction } from 'ajv';
import type { FastifySchemaCompiler } from 'fastify';
import { Type, type TSchema } from 'typebox';
import { validatorCompiler } from '../http/validation.js';
import { AccessRightSchema, MAX_ACCESS_RIGHTS, TARGET_TYPES } from './access-rights.js';

/**
 * The validator of a body of access rights (`PUT …/access_rights`): each right is checked against the one shape its
 * `targetType` names, and an error is about that shape.
 *
 * Why not ajv on AccessRightSchema itself: the body validator removes the properties a schema does not list
 * (`removeAdditional`), and ajv tries a union's shapes in order, so a property-key right lost its `targetItemType` to
 * the node-category shape it was tried against first and then failed its own (a valid right refused); and a right
 * that fits no shape was told it "must be nodeCategory", the first shape's. The route's schema stays
 * AccessRightSchema, for the OpenAPI document and the client.
 */

const compileBody = (schema: TSchema) => validatorCompiler({ schema, httpPart: 'body', method: 'PUT', url: '' }) as ValidateFunction;

const shapeOf = new Map<string, ValidateFunction>(
  (AccessRightSchema as unknown as { anyOf: { properties: { targetType: { const: string } } }[] }).anyOf.map((shape) => [
    shape.properties.targetType.const,
    compileBody(shape as unknown as TSchema),
  ]),
);

// The body without what the shapes decide: the list, its bound, and a known targetType in each right.
const outline = compileBody(
  Type.Object({ accessRights: Type.Array(Type.Object({ targetType: Type.Enum([...TARGET_TYPES]) }), { maxItems: MAX_ACCESS_RIGHTS }) }),
);

function validateAccessRightsBody(data: unknown): boolean {
  const validate = validateAccessRightsBody as unknown as { errors: ErrorObject[] | null };
  validate.errors = null;
  if (!outline(data)) {
    validate.errors = outline.errors ?? null;
    return false;
  }
  const rights = (data as { accessRights: { targetType: string }[] }).accessRights;
  for (let i = 0; i < rights.length; i++) {
    const shape = shapeOf.get(rights[i]!.targetType)!;
    if (!shape(rights[i])) {
      validate.errors = (shape.errors ?? []).map((error) => ({ ...error, instancePath: `/accessRights/${i}${error.instancePath}` }));
      return false;
    }
  }
  return true;
}

/** The route's validator compiler: this validator for the body, the app's for the rest (the path parameters). */
export const accessRightsValidatorCompiler: FastifySchemaCompiler<unknown> = (route) =>
  route.httpPart === 'body' ? (validateAccessRightsBody as ReturnType<FastifySchemaCompiler<unknown>>) : validatorCompiler(route);
