/** The extension identifier, as declared in capabilities and envelopes. */
export const TASKS_EXTENSION_ID = "io.modelcontextprotocol/tasks";

/** The protocol revision this facade serves. */
export const MODERN_PROTOCOL_VERSION = "2026-07-28";

/** The per-request envelope key carrying the client's capabilities. */
export const CLIENT_CAPABILITIES_META_KEY = "io.modelcontextprotocol/clientCapabilities";

/** The per-request envelope key carrying the protocol revision. */
export const PROTOCOL_VERSION_META_KEY = "io.modelcontextprotocol/protocolVersion";

/** The `_meta` key tagging notifications sent on a `subscriptions/listen` stream. */
export const SUBSCRIPTION_ID_META_KEY = "io.modelcontextprotocol/subscriptionId";

/** The 2025-11-25 related-task key, which must never appear on an inlined 2026 result. */
export const RELATED_TASK_META_KEY = "io.modelcontextprotocol/related-task";
