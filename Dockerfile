# Omotai runtime image: Debian's Chromium, Deno from npm, the runtime in stdio mode.
# Build: docker build -t omotai .     Run: docker run -i --rm omotai
FROM node:20-bookworm-slim
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends chromium ca-certificates \
 && rm -rf /var/lib/apt/lists/*
RUN npm install -g deno@2.9.6
RUN useradd --create-home --uid 10001 omotai
WORKDIR /app
COPY --chown=omotai:omotai . .
USER omotai
RUN deno install && deno cache runtime/main.ts && deno cache --no-config runtime/proxy/proxy_main.ts
# stdio by default; sse mode needs an agent key on every MCP request (omotai agent add NAME)
# and may bind beyond loopback with --host. Mount your policy:
#   docker run -i --rm -v $PWD/policy.yaml:/app/policy.yaml:ro omotai
# (without one, the bundled demo policy allows only the demo site's origin).
ENTRYPOINT ["deno", "task", "omotai"]
CMD ["start", "--mode", "stdio", "--data-dir", "runs", "--policy", "runtime/demo/demo_policy.yaml"]
