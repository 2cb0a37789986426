import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { isAdmin } from '../auth/principal.js';
import { invalidParameter } from '../errors.js';
import { noContent } from '../http/no-content.js';
import { errorResponses } from '../http/schemas.js';
import { SettingsSchema } from './schemas.js';
import type { SettingsStore } from './settings-store.js';
import { applyWebhookSettingsPatch, validateWebhookOption, type WebhookSettings } from './webhook-settings.js';

export interface SettingsRoutesOptions {
  settings: SettingsStore;
  publicBaseUrl: string;
}

export const settingsRoutes: FastifyPluginAsyncTypebox<SettingsRoutesOptions> = async (app, { settings, publicBaseUrl }) => {
  app.get(
    '/api/config',
    {
      // Anyone: the answer itself is reduced for non-Admins (the webhooks section is Admin's only).
      config: { access: 'public' },
      schema: {
        operationId: 'getSettings',
        tags: ['settings'],
        summary: 'The settings; the webhooks section is shown to Admin users only',
        response: { 200: SettingsSchema },
      },
    },
    async (request) => (isAdmin(request.principal) ? { url: publicBaseUrl, webhooks: settings.webhooks } : { url: publicBaseUrl }),
  );

  app.post(
    '/api/config',
    {
      config: { access: 'admin' },
      schema: {
        operationId: 'updateSettings',
        tags: ['settings'],
        summary: 'Change webhooks settings: {path: "webhooks", configuration: {...}} or {path: "webhooks.<option>", configuration: value}',
        body: Type.Object({ path: Type.String({ minLength: 1 }), configuration: Type.Unknown() }),
        response: { 204: Type.Null(), ...errorResponses(400, 401, 403) },
      },
    },
    async (request, reply) => {
      const { path, configuration } = request.body;
      let change: (current: WebhookSettings) => WebhookSettings;
      if (path === 'webhooks') {
        change = (current) => applyWebhookSettingsPatch(current, configuration);
      } else if (path.startsWith('webhooks.')) {
        const option = path.slice('webhooks.'.length);
        const value = validateWebhookOption(option, configuration);
        change = (current) => ({ ...current, [option]: value });
      } else {
        throw invalidParameter(`path "${path}" is not a settings section this service has: use "webhooks" or "webhooks.<option>"`, 'path');
      }
      await settings.update(change);
      return noContent(reply);
    },
  );
};
