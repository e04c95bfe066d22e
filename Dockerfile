# The web app is built in its own stage (Vite and React are build-time dependencies only).
FROM node:20-bookworm-slim AS web
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund --ignore-scripts
COPY . .
RUN npm run build:web

# Runtime dependencies are installed where a compiler exists: isolated-vm (actions) compiles from source.
FROM node:20-bookworm-slim AS deps
WORKDIR /app
RUN apt-get update && apt-get install -y --no-install-recommends g++ make python3 && rm -rf /var/lib/apt/lists/*
COPY package.json package-lock.json ./
# The postinstall (patch-package) applies these to the installed dependencies.
COPY patches ./patches
RUN npm ci --omit=dev --no-audit --no-fund

FROM node:20-bookworm-slim
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY . .
COPY --from=web /app/dist/web ./dist/web
ENV NODE_ENV=production PORT=3000 HOST=0.0.0.0
EXPOSE 3000
CMD ["node", "--import", "tsx", "src/main.ts"]
