# The API and the job workers (ROLE=api | worker | all) on Node 24. tsx runs the TypeScript sources directly,
# so there is no build step; tsx is a runtime dependency.
FROM node:24-slim

WORKDIR /app

# Dependencies first (cached while only sources change). The workspace manifest is needed by `npm ci`.
# NODE_ENV is set after the install: with NODE_ENV=production npm would skip the devDependencies.
COPY package.json package-lock.json ./
COPY client-sdk/package.json client-sdk/package.json
RUN npm ci --no-audit --no-fund && npm cache clean --force

COPY tsconfig.json ./
COPY src src
COPY scripts scripts

# Uploaded media (and the embedded database, if DATABASE_URL is left unset) live under DATA_DIR.
RUN mkdir -p /app/.data && chown node:node /app/.data
VOLUME /app/.data

ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=3000 \
    DATA_DIR=/app/.data \
    SEED_DEMO_DATA=false

USER node
EXPOSE 3000

# /health is answered over plain HTTP too (it is exempt from the production HTTPS redirect).
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s --retries=5 \
  CMD node -e "fetch('http://127.0.0.1:'+(process.env.PORT||3000)+'/health').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"

# node is PID 1 and receives SIGTERM itself: the server drains HTTP, stops pg-boss and closes the pool.
CMD ["node", "--import", "tsx", "src/server.ts"]
