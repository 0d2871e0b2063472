# Omotai runtime image: Debian's Chromium, Deno from npm, and the `omotai` command (the
# launcher, installed as `deno task install` installs it) serving MCP on stdio, as a non-root
# user whose uid the browser runs under, with its data dir on a volume.
#   Build: docker build -t omotai .
#   Run:   docker run -i --rm -v omotai-data:/data omotai
#   Your policy: docker run -i --rm -v omotai-data:/data -v $PWD/policy.yaml:/policy.yaml:ro \
#                  omotai start --policy /policy.yaml
# (without one, the bundled demo policy allows only the demo site's origin). sse mode needs an
# agent key on every MCP request (omotai agent add NAME) and may bind beyond loopback:
#   docker run --rm -p 8080:8080 -v omotai-data:/data omotai start --mode sse --host 0.0.0.0
# tests/launcher_docker_test.ts runs this file's install step and command line outside Docker;
# .ci/container builds it with podman (BASE made by debootstrap) and runs a session in it.
ARG BASE=node:20-bookworm-slim
FROM $BASE
# chromium-sandbox: the setuid sandbox Chromium falls back on where the engine refuses it user
# namespaces, so a non-root browser keeps a sandbox. bubblewrap + socat: each browser in a
# network namespace of its own whose only way out is the egress proxy (runtime/isolation/);
# under Docker's default seccomp profile user namespaces are refused, and the runtime then
# says so in one line and runs without (run with --security-opt seccomp=unconfined, or a
# profile that allows them, to have it).
# The browser is pinned twice: the Debian package's version, and the SHA-256 of the binary the
# runtime runs (the headless shell), which the build checks and the runtime checks at every
# start and launch (OMOTAI_BROWSER_SHA256: any other build is BROWSER_PIN_MISMATCH). Update
# both together when Debian ships a new Chromium (bookworm-security keeps only the latest, so
# a stale pin fails the build rather than installing something else):
#   apt-get install chromium-headless-shell=NEW && sha256sum /usr/lib/chromium/chromium-headless-shell
# The hash is amd64's; another architecture fails the build until its hash is recorded.
ARG CHROMIUM_VERSION=156.0.8078.114-1~deb12u1
ARG CHROMIUM_HEADLESS_SHELL_SHA256_AMD64=398f32b330bd5873b564dd1008e14b1312988a1ee6753a1762cd313c2c51841c
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends chromium=$CHROMIUM_VERSION chromium-common=$CHROMIUM_VERSION chromium-headless-shell=$CHROMIUM_VERSION chromium-sandbox=$CHROMIUM_VERSION ca-certificates bubblewrap socat \
 && rm -rf /var/lib/apt/lists/* \
 && test "$(dpkg --print-architecture)" = amd64 \
 && echo "$CHROMIUM_HEADLESS_SHELL_SHA256_AMD64  /usr/lib/chromium/chromium-headless-shell" | sha256sum --check --strict -
RUN npm install -g deno@2.9.6
# Never root: as root Chromium must drop its sandbox. omotai-browser: the browser's own user
# when the runtime is run as root after all (docker run --user 0).
RUN useradd --create-home --uid 10001 omotai \
 && useradd --system --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin omotai-browser \
 && mkdir -m 0700 /data && chown omotai:omotai /data
WORKDIR /app
COPY --chown=omotai:omotai . .
USER 10001
ENV DENO_INSTALL_ROOT=/home/omotai/.deno OMOTAI_DATA_DIR=/data \
    OMOTAI_BROWSER_SHA256=$CHROMIUM_HEADLESS_SHELL_SHA256_AMD64
# One layer: the install hard-links the npm packages the cache steps just fetched.
RUN deno install \
 && deno cache runtime/main.ts runtime/cli/main.ts \
 && deno cache --no-config runtime/proxy/proxy_main.ts \
 && deno task install
VOLUME ["/data"]
ENTRYPOINT ["/home/omotai/.deno/bin/omotai"]
CMD ["start", "--policy", "/app/runtime/demo/demo_policy.yaml"]
