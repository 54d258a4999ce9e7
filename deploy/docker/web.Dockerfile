# syntax=docker/dockerfile:1.7
# plugboard-web: the dashboard (apps/web): the Next.js production build served by its own Node
# server (apps/web/server.ts), which proxies REST and the WebSocket streams of the gateways.
#
#   docker build -f deploy/docker/web.Dockerfile -t plugboard/web:0.1.0 .
#
# Why not `output: 'standalone'`: Next's standalone output emits its own minimal server.js and does
# not trace a custom server; the two cannot be combined (Next.js docs, "Custom Server"). The
# dashboard needs its custom server for WebSocket upgrades, so the image ships the `next build`
# output with production dependencies only (`npm ci --omit=dev`), pruned to the files the server can
# load (web-runtime-deps.mjs: Next's own traces plus @vercel/nft from the server — what standalone
# output would keep), the server bundled by esbuild and next.config compiled to .mjs (no TypeScript
# loader, no SWC at run time). Runtime: distroless, non-root; with a read-only root filesystem,
# Next's cache dirs and /tmp are emptyDirs in the chart.
ARG NODE_IMAGE=node:22-bookworm-slim
ARG RUNTIME_IMAGE=gcr.io/distroless/nodejs22-debian12:nonroot

# Every workspace's manifest (and the bin shims npm links), extracted from the context so that a new
# workspace needs no Dockerfile change. BuildKit caches COPY --from by content, so the `npm ci`
# layers below stay cached until a package.json or the lockfile changes.
FROM ${NODE_IMAGE} AS context
WORKDIR /src
COPY . .
RUN mkdir -p /manifests \
 && cp package.json package-lock.json .npmrc /manifests/ \
 && find packages apps -mindepth 2 -maxdepth 2 -name package.json -exec cp --parents {} /manifests/ \; \
 && find packages apps -mindepth 3 -maxdepth 3 -path '*/bin/*' -type f -exec cp --parents {} /manifests/ \;

FROM ${NODE_IMAGE} AS manifests
WORKDIR /src
COPY --from=context /manifests/ ./

FROM manifests AS build
# The same first step as the gateway's build stage, so a builder that builds both runs npm ci once.
RUN --mount=type=cache,target=/root/.npm npm ci --ignore-scripts --no-audit --no-fund
ENV NEXT_TELEMETRY_DISABLED=1
COPY --from=context /src ./
RUN npm run build -w @plugboard/web \
 && rm -rf apps/web/.next/cache \
 && mkdir -p apps/web/public \
 && node_modules/.bin/esbuild apps/web/next.config.ts --format=esm --platform=node --log-level=warning \
      --outfile=apps/web/dist/next.config.mjs

FROM manifests AS prod-deps
RUN --mount=type=cache,target=/root/.npm \
    npm ci --omit=dev --ignore-scripts --no-audit --no-fund -w @plugboard/web \
 && mkdir -p apps/web/node_modules
COPY --from=build /src/apps/web/.next ./apps/web/.next
COPY --from=build /src/apps/web/dist ./apps/web/dist
COPY --from=context /src/deploy/docker/web-runtime-deps.mjs /tmp/
RUN node /tmp/web-runtime-deps.mjs apps/web

FROM ${RUNTIME_IMAGE}
LABEL org.opencontainers.image.title="plugboard-web" \
      org.opencontainers.image.description="Plugboard operator dashboard" \
      org.opencontainers.image.licenses="Apache-2.0"
WORKDIR /app
ENV NODE_ENV=production \
    NEXT_TELEMETRY_DISABLED=1 \
    PORT=3000 \
    HOST=0.0.0.0 \
    PATH=/nodejs/bin:/usr/local/bin:/usr/bin:/bin
COPY --from=prod-deps /src/package.json ./
COPY --from=prod-deps /src/node_modules ./node_modules
COPY --from=prod-deps /src/apps/web/node_modules ./apps/web/node_modules
COPY --from=build /src/tsconfig.json ./
COPY --from=build /src/apps/web/package.json /src/apps/web/dist/next.config.mjs /src/apps/web/tsconfig.json ./apps/web/
COPY --from=build /src/apps/web/dist/server.js ./apps/web/server.mjs
COPY --from=build /src/apps/web/public ./apps/web/public
COPY --from=build /src/apps/web/.next ./apps/web/.next
USER 65532:65532
EXPOSE 3000
ENTRYPOINT ["/nodejs/bin/node", "/app/apps/web/server.mjs"]
