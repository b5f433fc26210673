# Strata: the server and its plugins as static binaries on a distroless,
# non-root image. Build: docker build -t strata .   Run: see deploy/compose.yaml
# and docs/scaling.md.
FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
# pluginsdk is a module of its own, which go.mod replaces with ./pluginsdk.
COPY pluginsdk/go.mod pluginsdk/go.sum ./pluginsdk/
RUN go mod download
COPY . .
# CGO_ENABLED=0: SQLite is pure Go (modernc.org/sqlite), so every binary is
# static and runs on an image with no C library.
RUN set -eu; mkdir -p /out/plugins; \
    CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o /out/strata ./cmd/strata; \
    for dir in plugins/*/; do \
      name=$(basename "$dir"); \
      [ -f "$dir/main.go" ] || continue; \
      CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "/out/plugins/$name" "./plugins/$name"; \
    done; \
    /out/strata plugin trust /out/plugins/* --plugin-dir /out/plugins; \
    mkdir -p /out/data

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/strata /usr/local/bin/strata
COPY --from=build /out/plugins /usr/local/lib/strata/plugins
# The data folder: SQLite apps, local files, backups, the instance key (unless
# STRATA_SECRET_KEY is set) and the plugins' sockets. Owned by nonroot.
COPY --from=build --chown=65532:65532 /out/data /data
ENV STRATA_ADDR=0.0.0.0:8080 \
    STRATA_DATA_DIR=/data \
    STRATA_PLUGIN_DIR=/usr/local/lib/strata/plugins \
    STRATA_LOG_FORMAT=json
USER 65532:65532
VOLUME /data
EXPOSE 8080 9090
# Orchestrators probe GET /healthz (alive) and GET /readyz (ready to serve).
ENTRYPOINT ["/usr/local/bin/strata"]
CMD ["serve"]
