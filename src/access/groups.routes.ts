import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { Database } from '../db/database.js';
import { noContent } from '../http/no-content.js';
import { errorResponses } from '../http/schemas.js';
import { accessRightsValidatorCompiler } from './access-rights-body.js';
import * as groups from './groups.service.js';
import {
  AccessRightsSettingsBody,
  CreateGroupBody,
  DataSourceGroupSchema,
  GroupNameSchema,
  GroupNamesQuery,
  GroupParams,
  GroupSourceKey,
  GroupUsersParams,
  GroupUsersQuery,
  GroupUsersSchema,
  RenameGroupBody,
  SetAccessRightsBody,
} from './schemas.js';

const SourceParams = Type.Object({ sourceKey: GroupSourceKey });

/**
 * The Admin's management of a data source's groups and their access rights, at the paths and in the shapes of LKE's
 * `UserAPI` and `AccessRightAPI` (registered with `admin` access: every path is under /api/admin/).
 */
export const groupAdminRoutes: FastifyPluginAsyncTypebox<{ db: Database }> = async (app, { db }) => {
  app.get(
    '/api/admin/:sourceKey/groups',
    {
      schema: {
        operationId: 'listGroups',
        tags: ['groups'],
        summary: "The data source's groups with their access rights: its custom groups and the built-in Admin and Analyst",
        params: SourceParams,
        response: { 200: Type.Array(DataSourceGroupSchema), ...errorResponses(400, 401, 403) },
      },
    },
    async (request) => groups.listGroups(db, request.params.sourceKey),
  );

  app.post(
    '/api/admin/:sourceKey/groups',
    {
      schema: {
        operationId: 'createGroup',
        tags: ['groups'],
        summary: 'Create a custom group of the data source, without access rights',
        params: SourceParams,
        body: CreateGroupBody,
        response: { 201: DataSourceGroupSchema, ...errorResponses(400, 401, 403, 409) },
      },
    },
    async (request, reply) => reply.status(201).send(await groups.createGroup(db, request.principal, request.params.sourceKey, request.body)),
  );

  app.get(
    '/api/admin/:sourceKey/groups/:id',
    {
      schema: {
        operationId: 'getGroup',
        tags: ['groups'],
        summary: 'One group of the data source (a custom one of its own, or a built-in one) with its access rights',
        params: GroupParams,
        response: { 200: DataSourceGroupSchema, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request) => groups.getGroup(db, request.params.sourceKey, request.params.id),
  );

  app.patch(
    '/api/admin/:sourceKey/groups/:id',
    {
      schema: {
        operationId: 'updateGroup',
        tags: ['groups'],
        summary: 'Rename a custom group (the built-in ones cannot be)',
        params: GroupParams,
        body: RenameGroupBody,
        response: { 200: DataSourceGroupSchema, ...errorResponses(400, 401, 403, 404, 409) },
      },
    },
    async (request) => groups.renameGroup(db, request.principal, request.params.sourceKey, request.params.id, request.body.name),
  );

  app.delete(
    '/api/admin/:sourceKey/groups/:id',
    {
      schema: {
        operationId: 'deleteGroup',
        tags: ['groups'],
        summary: 'Delete a custom group, its access rights and its memberships (the built-in ones cannot be)',
        params: GroupParams,
        response: { 204: Type.Null(), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request, reply) => {
      await groups.deleteGroup(db, request.principal, request.params.sourceKey, request.params.id);
      return noContent(reply);
    },
  );

  app.put(
    '/api/admin/:sourceKey/groups/:id/access_rights',
    {
      // Each right checked against the shape its targetType names (access-rights-body.ts says why).
      validatorCompiler: accessRightsValidatorCompiler,
      schema: {
        operationId: 'setAccessRights',
        tags: ['groups'],
        summary: "Replace a custom group's access rights with these (the whole set)",
        params: GroupParams,
        body: SetAccessRightsBody,
        response: { 204: Type.Null(), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request, reply) => {
      await groups.setAccessRights(db, request.principal, request.params.sourceKey, request.params.id, request.body.accessRights);
      return noContent(reply);
    },
  );

  app.patch(
    '/api/admin/:sourceKey/accessRights/settings',
    {
      schema: {
        operationId: 'updateAccessRightsSettings',
        tags: ['groups'],
        summary: "Turn the data source's property-key access rights on or off",
        params: SourceParams,
        body: AccessRightsSettingsBody,
        response: { 204: Type.Null(), ...errorResponses(400, 401, 403) },
      },
    },
    async (request, reply) => {
      await groups.setAccessRightsSettings(db, request.principal, request.params.sourceKey, request.body);
      return noContent(reply);
    },
  );
};

/**
 * What any user of a data source may read of its groups (registered with `user` access): the access hook has
 * resolved the caller's access to `:sourceKey` first, so a source none of their groups is on answers as unknown.
 */
export const groupRoutes: FastifyPluginAsyncTypebox<{ db: Database }> = async (app, { db }) => {
  app.get(
    '/api/:sourceKey/groups',
    {
      schema: {
        operationId: 'listGroupNames',
        tags: ['groups'],
        summary: "The names of the data source's groups, custom and built-in; with `action`, those that have that action",
        params: SourceParams,
        querystring: GroupNamesQuery,
        response: { 200: Type.Array(GroupNameSchema), ...errorResponses(400, 401) },
      },
    },
    async (request) => groups.listGroupNames(db, request.params.sourceKey, request.query.action),
  );

  app.get(
    '/api/:sourceKey/groups/:groupId/users',
    {
      schema: {
        operationId: 'listGroupUsers',
        tags: ['groups'],
        summary: "A page of the users of one of the data source's groups",
        params: GroupUsersParams,
        querystring: GroupUsersQuery,
        response: { 200: GroupUsersSchema, ...errorResponses(400, 401, 404) },
      },
    },
    async (request) => groups.listGroupUsers(db, request.params.sourceKey, request.params.groupId, request.query),
  );
};
