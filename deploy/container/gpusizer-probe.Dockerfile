# syntax=docker/dockerfile:1
# gpusizer-probe.Dockerfile - the on-node GPU probe on an NVIDIA CUDA base.
# Built with the CUDA 13 toolkit (cudart linked statically); the runtime
# image brings cuBLASLt and NCCL, which the probe dlopens; the NVIDIA
# container toolkit mounts the driver (libcuda, NVML, nvidia-smi). From the
# repository root:
#
#   docker build -f deploy/container/gpusizer-probe.Dockerfile -t gpusizer-probe:0.1.0 .
#   docker run --rm --gpus all gpusizer-probe:0.1.0 --quick          # report on stdout
#   docker run --rm --gpus all -v /etc/gpusizer/probe.token:/run/secrets/probe.token:ro \
#     -e GPUSIZER_URL=https://gpusizer.example.internal gpusizer-probe:0.1.0 loop
#
# `loop` (deploy/container/probe-loop.sh) measures, reports, sleeps
# GPUSIZER_PROBE_INTERVAL seconds and repeats: the Kubernetes DaemonSet's
# mode. Any other arguments go to gpusizer-probe itself.

ARG CUDA_VERSION=13.0.2
ARG UBUNTU=ubuntu24.04

FROM nvidia/cuda:${CUDA_VERSION}-devel-${UBUNTU} AS build
SHELL ["/bin/bash", "-o", "pipefail", "-c"]
RUN apt-get update \
 && apt-get install -y --no-install-recommends \
      gcc g++ libc6-dev make pkg-config libcurl4-openssl-dev libjansson-dev \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY probe/ probe/
# PROBE_ARCHS defaults to sm_80..sm_120 plus PTX (docs/PROBE.md).
ARG PROBE_ARCHS="80 86 89 90 100 120"
RUN make -f probe/probe.mk -j"$(nproc)" probe CUDA_HOME=/usr/local/cuda \
      PROBE_ARCHS="${PROBE_ARCHS}" \
 && strip --strip-unneeded build/gpusizer-probe \
 && build/gpusizer-probe --version

FROM nvidia/cuda:${CUDA_VERSION}-runtime-${UBUNTU}
RUN apt-get update \
 && apt-get install -y --no-install-recommends libcurl4t64 libjansson4 ca-certificates \
 && rm -rf /var/lib/apt/lists/* \
 && groupadd --system --gid 10001 gpusizer \
 && useradd --system --uid 10001 --gid 10001 --no-create-home \
      --home-dir /nonexistent --shell /usr/sbin/nologin gpusizer \
 && install -d -o 10001 -g 10001 -m 0700 /var/lib/gpusizer-probe
COPY --from=build /src/build/gpusizer-probe /usr/local/bin/gpusizer-probe
COPY deploy/container/probe-loop.sh /usr/local/bin/gpusizer-probe-loop
# compute for CUDA, utility for NVML and nvidia-smi.
ENV NVIDIA_VISIBLE_DEVICES=all \
    NVIDIA_DRIVER_CAPABILITIES=compute,utility \
    GPUSIZER_STATE_DIR=/var/lib/gpusizer-probe \
    GPUSIZER_SPOOL_DIR=/var/lib/gpusizer-probe/spool \
    GPUSIZER_TOKEN_FILE=/run/secrets/probe.token \
    GPUSIZER_PROBE_INTERVAL=86400
LABEL org.opencontainers.image.title="gpusizer-probe" \
      org.opencontainers.image.description="gpusizer: on-node GPU probe (CUDA, cuBLASLt, NVML, NCCL)" \
      org.opencontainers.image.version="0.1.0"
USER 10001:10001
# spool/ (undelivered reports) and last-report.json.
VOLUME ["/var/lib/gpusizer-probe"]
# In loop mode the script touches $GPUSIZER_STATE_DIR/.last-attempt before
# each run; healthy while that is younger than two intervals. A one-shot
# run exits before the first check matters.
HEALTHCHECK --interval=5m --timeout=10s --start-period=30m --retries=2 \
  CMD ["/usr/local/bin/gpusizer-probe-loop", "healthcheck"]
ENTRYPOINT ["/usr/local/bin/gpusizer-probe-loop"]
CMD ["--help"]
