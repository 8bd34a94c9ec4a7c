import type { Release } from "./limits.js";

/**
 * The response again, calling `release` once its body has been read to the end, failed, or
 * been cancelled (the client went away): what a listen stream or a `tasks/result` wait holds
 * is given back when the stream ends, not when it opens.
 */
export function releaseWhenDone(response: Response, release: Release): Response {
  const source = response.body;
  if (source === null) {
    release();
    return response;
  }
  const reader = source.getReader();
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const { done, value } = await reader.read();
        if (done) {
          release();
          controller.close();
        } else controller.enqueue(value);
      } catch (error) {
        release();
        controller.error(error);
      }
    },
    cancel(reason) {
      release();
      return reader.cancel(reason);
    },
  });
  return new Response(body, {
    status: response.status,
    statusText: response.statusText,
    headers: response.headers,
  });
}
