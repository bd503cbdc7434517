# syntax=docker/dockerfile:1
# gpusizerd.Dockerfile - the gpusizer REST service, built from this
# repository on Debian 12 and shipped on Debian 12 slim with only the
# runtime libraries. From the repository root:
#
#   docker build -f deploy/container/gpusizerd.Dockerfile -t gpusizerd:0.1.0 .
#   docker run --rm -p 8080:8080 -e DATABASE_URL='host=db dbname=gpusizer user=gpusizer' gpusizerd:0.1.0
#   docker run --rm -e DATABASE_URL=... gpusizerd:0.1.0 migrate
#
# Pin the base images by digest in production (debian:12-slim@sha256:...).

ARG DEBIAN_IMAGE=debian:12-slim

FROM ${DEBIAN_IMAGE} AS build
SHELL ["/bin/bash", "-o", "pipefail", "-c"]
# The Debian -dev packages the Makefile's pkg-config modules name
# (libmicrohttpd jansson libpq libcurl).
RUN apt-get update \
 && apt-get install -y --no-install-recommends \
      gcc libc6-dev make pkg-config \
      libmicrohttpd-dev libjansson-dev libpq-dev libzstd-dev libcurl4-openssl-dev \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
# Every folder the Makefile's daemon sources come from, and the one probe
# header the service shares (probe/contract.h). deploy/lint.sh builds
# build/gpusizerd from exactly these paths.
COPY Makefile ./
COPY server/ server/
COPY handlers/ handlers/
COPY storage/ storage/
COPY engine/ engine/
COPY lib/ lib/
COPY probe/contract.h probe/contract.h
COPY migrations/ migrations/
COPY openapi.yaml ./
# The Makefile's dependency step also wants the PostgreSQL server, jq and
# curl for `make test`; the image build needs none of them.
RUN mkdir -p build \
 && touch build/.deps-ok \
 && make -j"$(nproc)" build/gpusizerd \
 && strip --strip-unneeded build/gpusizerd \
 && build/gpusizerd --version

FROM ${DEBIAN_IMAGE}
# Runtime libraries only (ldd build/gpusizerd), plus curl for the health
# check.
RUN apt-get update \
 && apt-get install -y --no-install-recommends \
      libmicrohttpd12 libjansson4 libpq5 libzstd1 ca-certificates curl \
 && rm -rf /var/lib/apt/lists/* \
 && groupadd --system --gid 10001 gpusizer \
 && useradd --system --uid 10001 --gid 10001 --no-create-home \
      --home-dir /nonexistent --shell /usr/sbin/nologin gpusizer
COPY --from=build /src/build/gpusizerd /usr/local/bin/gpusizerd
COPY --from=build /src/migrations/ /usr/local/share/gpusizer/migrations/
COPY --from=build /src/openapi.yaml /usr/local/share/gpusizer/openapi.yaml
ENV GPUSIZER_LISTEN=0.0.0.0:8080 \
    GPUSIZER_MIGRATIONS_DIR=/usr/local/share/gpusizer/migrations \
    GPUSIZER_OPENAPI_FILE=/usr/local/share/gpusizer/openapi.yaml
LABEL org.opencontainers.image.title="gpusizerd" \
      org.opencontainers.image.description="gpusizer: GPU job sizing REST service" \
      org.opencontainers.image.version="0.1.0"
# A passwd entry matters: libpq looks the user up when the conninfo has no
# user=. The root file system can be mounted read-only; nothing is written.
USER 10001:10001
EXPOSE 8080
STOPSIGNAL SIGTERM
# /healthz answers as soon as the process serves; /readyz (database and
# migrations) is for load balancers and Kubernetes readiness, not for
# restarting the container.
HEALTHCHECK --interval=15s --timeout=3s --start-period=10s --retries=3 \
  CMD ["curl", "-fsS", "-o", "/dev/null", "--max-time", "2", "http://127.0.0.1:8080/healthz"]
ENTRYPOINT ["/usr/local/bin/gpusizerd"]
CMD ["serve"]
