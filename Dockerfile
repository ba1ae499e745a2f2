# syntax=docker/dockerfile:1
# Build: compile the server, bundle the page, and build the SQLite module (better-sqlite3, a
# native addon: its install fetches a prebuilt binary, or compiles with the tools below).
FROM node:22-bookworm-slim AS build
WORKDIR /app
RUN apt-get update && apt-get install -y --no-install-recommends python3 make g++ && rm -rf /var/lib/apt/lists/*
COPY package.json package-lock.json ./
# Install scripts off for everything (`prepare` would build before the sources are copied in),
# then the one native module's own build: a prebuilt binary when it can be fetched, else compiled
# against the image's own Node headers (so an offline build works too).
RUN npm ci --ignore-scripts --no-audit --no-fund \
 && if [ -d /usr/local/include/node ]; then export npm_config_nodedir=/usr/local; fi \
 && npm rebuild better-sqlite3
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY client ./client
RUN npm run build && npm prune --omit=dev --no-audit --no-fund && npm cache clean --force

# Run: production dependencies (the built SQLite module included) and the build output only, as
# a non-root user. Kept endpoints live in the /data volume.
FROM node:22-bookworm-slim
ENV NODE_ENV=production HOST=0.0.0.0 PORT=8080 DATA_DIR=/data
WORKDIR /app
COPY package.json package-lock.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY --from=build /app/client/dist ./client/dist
RUN mkdir -p /data && chown node:node /data
VOLUME /data
USER node
EXPOSE 8080
HEALTHCHECK --interval=30s --timeout=3s --start-period=5s \
  CMD node -e "fetch('http://127.0.0.1:'+(process.env.PORT||8080)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
CMD ["node", "dist/main.js"]
