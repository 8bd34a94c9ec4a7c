/**
 * `@mcp-tasks/demo` as a library, for tests and embedding: the composed app, the HTTP
 * listener, the owner resolvers and the tools.
 *
 * @packageDocumentation
 */
export { createDemoApp, type DemoApp, type DemoAppOptions } from "./app.js";
export { type GatewayHeaderOptions, GatewayHeaderResolver } from "./auth/gateway-header.js";
export { JwtResolver, type JwtResolverOptions } from "./auth/jwt.js";
export {
  anonymousResolver,
  bearerToken,
  type OwnerResolution,
  type OwnerResolver,
} from "./auth/resolver.js";
export { parseTokenList, StaticTokenResolver } from "./auth/static-tokens.js";
export { ConfigError, type DemoConfig, HELP, parseConfig } from "./config.js";
export { listen, type RunningServer } from "./http-server.js";
export { openStore, type StoreKind, StoreUnavailableError } from "./store.js";
export { demoTools } from "./tools/index.js";
