# Alert Webhooks: `docker build -t alert-webhooks .`, then `docker run --init -p 3000:3000 -v aw-data:/app/data
# alert-webhooks` (embedded database), or compose.yaml (PostgreSQL, an API process and two workers).
# Two stages: the build stage compiles the service and its console with every dependency; the image keeps the
# compiled service and the production dependencies only. test/package/image.test.ts runs these steps (FROM, WORKDIR,
# COPY, RUN, ENV, ...) by scripts/image-steps.mjs in a clean copy, and starts the result as compose.yaml does.
ARG NODE_IMAGE=node:20-slim

FROM ${NODE_IMAGE} AS build
WORKDIR /src
# The lockfile first: the dependency layer is rebuilt only when it changes.
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY . .
RUN npm run build && npm prune --omit=dev --no-audit --no-fund

FROM ${NODE_IMAGE} AS run
ENV NODE_ENV=production DATA_DIR=/app/data PORT=3000 METRICS_PORT=9464
WORKDIR /app
COPY --from=build /src/package.json ./
COPY --from=build /src/node_modules ./node_modules
COPY --from=build /src/dist ./dist
# DATA_DIR belongs to the unprivileged user the service runs as (node, uid 1000, from the base image): the embedded
# database, its secrets key and the first admin's generated password live there.
RUN mkdir -p data && chown node:node data
USER node
VOLUME ["/app/data"]
EXPOSE 3000 9464
# Liveness of the API (or, with ROLE=worker, of METRICS_PORT): `alert-webhooks healthcheck`, no curl needed.
HEALTHCHECK --interval=15s --timeout=5s --start-period=60s --retries=3 CMD ["node", "dist/cli.js", "healthcheck"]
# SIGTERM (docker stop, a rollout) makes the service stop taking requests and work, finish the attempts in flight
# and close the database before it exits; give it longer than the request time-out (docker stop -t 30).
STOPSIGNAL SIGTERM
ENTRYPOINT ["node", "dist/cli.js"]
CMD ["serve"]
