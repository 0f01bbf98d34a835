# The API and the job workers (ROLE=api | worker | all) on Node 24, running the JavaScript that `npm run build`
# compiles (no TypeScript tooling at run time), as the unprivileged `node` user.
#   docker build -t territory-platform .
#   docker run -e ... territory-platform                       # the server: node dist/src/server.js
#   docker run -e ... territory-platform node dist/scripts/db-setup.js   # migrations and the app role

# 1. build: every dependency (the compiler is a devDependency), then tsc -p tsconfig.build.json -> dist/.
FROM node:24-slim AS build
WORKDIR /app
# The workspace manifest is needed by `npm ci` (client-sdk is an npm workspace of the repository).
COPY package.json package-lock.json ./
COPY client-sdk/package.json client-sdk/package.json
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src src
COPY scripts scripts
RUN npm run build

# 2. deps: the production dependencies only (cached while only sources change).
FROM node:24-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
COPY client-sdk/package.json client-sdk/package.json
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force

# 3. runtime: production dependencies and the compiled dist/ (with its copy of package.json, read for the version).
FROM node:24-slim
WORKDIR /app
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=3000 \
    DATA_DIR=/app/.data \
    SEED_DEMO_DATA=false

COPY --from=deps /app/package.json ./package.json
COPY --from=deps /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist

# Uploaded media (and the embedded database, if DATABASE_URL is left unset) live under DATA_DIR.
RUN mkdir -p /app/.data && chown node:node /app/.data
VOLUME /app/.data

USER node
EXPOSE 3000

# /health is answered over plain HTTP too (it is exempt from the production HTTPS redirect).
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s --retries=5 \
  CMD node -e "fetch('http://127.0.0.1:'+(process.env.PORT||3000)+'/health').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"

# node is PID 1 and receives SIGTERM itself: the server drains HTTP, stops pg-boss and closes the pool.
CMD ["node", "--enable-source-maps", "dist/src/server.js"]
