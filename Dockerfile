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
