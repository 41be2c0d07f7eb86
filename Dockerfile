# syntax=docker/dockerfile:1
#
# parley: one image for every role. The command picks it:
#   docker run parley api | worker | migrate up | admin ...

FROM golang:1.26-bookworm AS build
# The speech engine links libpocketsphinx with cgo.
RUN apt-get update \
    && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends libpocketsphinx-dev pkg-config \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY go.mod go.sum ./
RUN --mount=type=cache,target=/go/pkg/mod go mod download
COPY . .
# Built on bookworm like the runtime image, so cgo links against the same
# glibc and libpocketsphinx.
RUN --mount=type=cache,target=/go/pkg/mod \
    --mount=type=cache,target=/root/.cache/go-build \
    go build -trimpath -ldflags='-s -w' -o /out/parley ./cmd/parley

# ---- docker-compose.yml's other images, from the same pins as make cluster ----
# (Makefile: TEMPORAL_SERVER_VERSION, TEMPORAL_VERSION, TEMPORAL_UI_VERSION,
# MINIO_VERSION; docs/compose_test.go keeps these defaults equal to them).
# Only `--target temporal` or `--target minio` builds them; a plain build
# makes the parley image (the last stage) and skips them.

FROM golang:1.26-bookworm AS tools-build
ARG TEMPORAL_SERVER_VERSION=v1.29.1
ARG TEMPORAL_CLI_VERSION=v1.5.1
ARG TEMPORAL_UI_VERSION=v2.42.1
# `go install` names each binary after its package: server, sql, temporal, server.
RUN --mount=type=cache,target=/go/pkg/mod \
    --mount=type=cache,target=/root/.cache/go-build \
    GOBIN=/out/s go install go.temporal.io/server/cmd/server@${TEMPORAL_SERVER_VERSION} \
    && GOBIN=/out/s go install go.temporal.io/server/cmd/tools/sql@${TEMPORAL_SERVER_VERSION} \
    && GOBIN=/out/s go install github.com/temporalio/cli/cmd/temporal@${TEMPORAL_CLI_VERSION} \
    && GOBIN=/out/u go install github.com/temporalio/ui-server/v2/cmd/server@${TEMPORAL_UI_VERSION} \
    && mkdir -p /out/bin \
    && mv /out/s/server /out/bin/temporal-server \
    && mv /out/s/sql /out/bin/temporal-sql-tool \
    && mv /out/s/temporal /out/bin/temporal \
    && mv /out/u/server /out/bin/temporal-ui-server

FROM golang:1.26-bookworm AS minio-build
ARG MINIO_VERSION=v0.0.0-20260212201848-7aac2a2c5b7c
RUN --mount=type=cache,target=/go/pkg/mod \
    --mount=type=cache,target=/root/.cache/go-build \
    GOBIN=/out go install github.com/minio/minio@${MINIO_VERSION}

# Temporal's own server, its SQL schema tool, the CLI and the web UI server;
# scripts/cluster-temporal.sh (what make cluster runs too) sets up the schema,
# writes the config and starts the server.
FROM debian:bookworm-slim AS temporal
RUN apt-get update \
    && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends ca-certificates postgresql-client \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --system --uid 10002 --home-dir /etc/temporal --shell /usr/sbin/nologin temporal \
    && mkdir -p /etc/temporal/config && chown temporal: /etc/temporal/config
COPY --from=tools-build /out/bin/ /usr/local/bin/
COPY scripts/cluster-temporal.sh /usr/local/bin/cluster-temporal.sh
USER temporal
ENTRYPOINT ["cluster-temporal.sh"]
CMD ["serve"]

FROM debian:bookworm-slim AS minio
RUN apt-get update \
    && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends ca-certificates curl \
    && rm -rf /var/lib/apt/lists/*
COPY --from=minio-build /out/minio /usr/local/bin/minio
ENTRYPOINT ["minio"]

# ---- parley: the default (last) stage ----
FROM debian:bookworm-slim
# ffmpeg/ffprobe for media, pocketsphinx for speech (its libraries and the
# en-us models), fonts (+fontconfig via
# ffmpeg's libass) for burned-in subtitles, including Hebrew and Arabic.
RUN apt-get update \
    && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
        ca-certificates \
        ffmpeg \
        fontconfig \
        fonts-dejavu-core \
        fonts-noto-core \
        pocketsphinx \
        pocketsphinx-en-us \
        tzdata \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --system --uid 10001 --home-dir /nonexistent --shell /usr/sbin/nologin parley
COPY --from=build /out/parley /usr/local/bin/parley
USER parley
ENV PARLEY_HTTP_ADDR=0.0.0.0:8080
EXPOSE 8080
ENTRYPOINT ["parley"]
CMD ["api"]
