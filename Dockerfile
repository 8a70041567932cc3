# One image for the API and the worker (they differ only in their command; see docker-compose.yml).
# The TypeScript runs through tsx, a runtime dependency: the worker bundles the workflow sources at start,
# so shipping the sources as they are keeps one way of running the code.
FROM node:20-bookworm-slim

ENV NODE_ENV=production
WORKDIR /app

COPY package.json package-lock.json ./
# Exactly the lock's versions (it lists every platform's optional packages, so `npm ci` takes it anywhere).
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force

COPY . .
# The operator CLI: `docker compose exec api recoup accounts list`.
RUN ln -s /app/cli/bin.js /usr/local/bin/recoup && chmod +x /app/cli/bin.js

USER node
EXPOSE 3000
CMD ["node", "--import", "tsx", "api/main.ts"]
