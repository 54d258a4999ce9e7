# syntax=docker/dockerfile:1.7
# plugboard-gateway: the per-node gateway (apps/node-gateway) with the plugin framework it runs.
#
#   docker build -f deploy/docker/gateway.Dockerfile -t plugboard/gateway:0.1.0 .
#
# Stages: `build` compiles proto → plugin → node-gateway to dist/ with the full toolchain;
# `prod-deps` installs production dependencies only; the runtime stage is distroless (no shell, no
# package manager) and runs as the non-root user. The Helm chart runs the DaemonSet as root only
# because the kubelet directories it mounts are root-owned (see deploy/helm/plugboard/README.md).
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
RUN --mount=type=cache,target=/root/.npm npm ci --ignore-scripts --no-audit --no-fund
COPY --from=context /src ./
RUN npm run build -w @plugboard/proto -w @plugboard/plugin -w @plugboard/node-gateway

FROM manifests AS prod-deps
RUN --mount=type=cache,target=/root/.npm \
    npm ci --omit=dev --ignore-scripts --no-audit --no-fund -w @plugboard/node-gateway \
 && mkdir -p packages/proto/node_modules packages/plugin/node_modules apps/node-gateway/node_modules

FROM ${RUNTIME_IMAGE}
LABEL org.opencontainers.image.title="plugboard-gateway" \
      org.opencontainers.image.description="Plugboard per-node gateway: device plugins, PodResources, node model, REST/WebSocket/metrics" \
      org.opencontainers.image.licenses="Apache-2.0"
WORKDIR /app
ENV NODE_ENV=production \
    PATH=/nodejs/bin:/usr/local/bin:/usr/bin:/bin
COPY --from=prod-deps /src/package.json ./
COPY --from=prod-deps /src/node_modules ./node_modules
COPY --from=prod-deps /src/packages/proto/node_modules ./packages/proto/node_modules
COPY --from=prod-deps /src/packages/plugin/node_modules ./packages/plugin/node_modules
COPY --from=prod-deps /src/apps/node-gateway/node_modules ./apps/node-gateway/node_modules
COPY --from=build /src/packages/proto/package.json ./packages/proto/
COPY --from=build /src/packages/proto/dist ./packages/proto/dist
COPY --from=build /src/packages/plugin/package.json ./packages/plugin/
COPY --from=build /src/packages/plugin/dist ./packages/plugin/dist
COPY --from=build /src/packages/plugin/bin ./packages/plugin/bin
COPY --from=build /src/apps/node-gateway/package.json ./apps/node-gateway/
COPY --from=build /src/apps/node-gateway/dist ./apps/node-gateway/dist
COPY --from=build /src/apps/node-gateway/bin ./apps/node-gateway/bin
USER 65532:65532
EXPOSE 9400
ENTRYPOINT ["/nodejs/bin/node", "/app/apps/node-gateway/bin/plugboard-gateway.js"]
