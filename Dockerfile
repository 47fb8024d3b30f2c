# Toolport: a multi-stage build. The first stage compiles the release
# binary; the second carries only the binary and the CA certificates, and
# runs as an unprivileged user on a read-only root filesystem.
#
#   docker build -t toolport .
#   docker run --rm -p 8080:8080 -e TOOLPORT_HTTP__BIND=0.0.0.0:8080 toolport --demo
FROM rust:1-slim-bookworm AS build
WORKDIR /src
COPY . .
RUN cargo build --release --locked --bin toolport \
 && install -D -m 0755 target/release/toolport /out/toolport

FROM debian:bookworm-slim
RUN apt-get update \
 && apt-get install -y --no-install-recommends ca-certificates \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --system --uid 10001 --home-dir /nonexistent --shell /usr/sbin/nologin toolport
COPY --from=build /out/toolport /usr/local/bin/toolport
USER 10001:10001
# Inside a container the port is reached through its network namespace;
# the Host and Origin checks still apply (set http.allowed_hosts).
ENV TOOLPORT_HTTP__BIND=0.0.0.0:8080 \
    TOOLPORT_DATA_DIR=/tmp/toolport
EXPOSE 8080
ENTRYPOINT ["/usr/local/bin/toolport", "serve"]
