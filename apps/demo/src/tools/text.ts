/** A tool result with one text block. */
export function textResult(text: string, isError = false): Record<string, unknown> {
  return isError
    ? { content: [{ type: "text", text }], isError: true }
    : { content: [{ type: "text", text }] };
}

/** An `elicitation/create` input request for a form. */
export function elicitForm(
  message: string,
  properties: Record<string, unknown>,
  required: string[],
): { method: string; params: Record<string, unknown> } {
  return {
    method: "elicitation/create",
    params: { mode: "form", message, requestedSchema: { type: "object", properties, required } },
  };
}

/** The `content` of an accepted elicitation answer, or `null`. */
export function acceptedContent(answer: unknown): Record<string, unknown> | null {
  if (typeof answer !== "object" || answer === null) return null;
  const { action, content } = answer as { action?: unknown; content?: unknown };
  if (action !== "accept" || typeof content !== "object" || content === null) return null;
  return content as Record<string, unknown>;
}
