# syntax=docker/dockerfile:1.7
# plugboard-gateway: the per-node gateway (apps/node-gateway) with the plugin framework it runs.
#
#   docker build -f deploy/docker/gateway.Dockerfile -t plugboard/gateway:0.1.0 .
#
# Stages: `build` compiles proto → plugin → node-gateway and bundles the gateway with the full
# toolchain; the runtime stage is distroless (no shell, no package manager), holds only the bundle
# (no node_modules) and runs as the non-root user. Memory settings (NODE_OPTIONS heap cap,
# MALLOC_ARENA_MAX) come from the chart's `gateway.nodeOptions` / `gateway.mallocArenaMax`. The
# Helm chart runs the DaemonSet as root only because the kubelet directories it mounts are
# root-owned (see deploy/helm/plugboard/README.md).
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
# Type-checks and compiles proto → api → topology → plugin → node-gateway, then bundles the gateway
# (apps/node-gateway/scripts/bundle.mjs): one tree-shaken, minified ESM entry plus chunks with every
# dependency inside, so the runtime stage needs no node_modules at all.
RUN npm run build -w @plugboard/apimachinery -w @plugboard/k8s-api -w @plugboard/proto -w @plugboard/grpc-authority -w @plugboard/api -w @plugboard/topology -w @plugboard/plugin -w @plugboard/node-gateway

FROM ${RUNTIME_IMAGE}
LABEL org.opencontainers.image.title="plugboard-gateway" \
      org.opencontainers.image.description="Plugboard per-node gateway: device plugins, PodResources, node model, REST/WebSocket/metrics" \
      org.opencontainers.image.licenses="Apache-2.0"
WORKDIR /app
ENV NODE_ENV=production \
    PATH=/nodejs/bin:/usr/local/bin:/usr/bin:/bin
# The bundle, its chunks, source maps and the third-party licence notices (*.LEGAL.txt).
COPY --from=build /src/apps/node-gateway/dist/bundle/ ./
USER 65532:65532
EXPOSE 9400
ENTRYPOINT ["/nodejs/bin/node", "/app/plugboard-gateway.mjs"]
