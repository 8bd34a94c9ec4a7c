/**
 * Wraps an SSE body so that `onEnd` runs when the stream ends or its reader goes away.
 * `preface` (an SSE comment) is sent first, at once: a stream that may carry no event for
 * a long time (the standalone GET stream) then shows its headers to the client right away
 * instead of when the first event or keep-alive comes.
 */
export function watchBody(response: Response, onEnd: () => void, preface?: string): Response {
  const body = response.body;
  if (body === null) {
    onEnd();
    return response;
  }
  const reader = body.getReader();
  let ended = false;
  const end = () => {
    if (!ended) {
      ended = true;
      onEnd();
    }
  };
  const wrapped = new ReadableStream<Uint8Array>({
    start(controller) {
      if (preface !== undefined) controller.enqueue(new TextEncoder().encode(preface));
    },
    async pull(controller) {
      try {
        const { done, value } = await reader.read();
        if (done) {
          end();
          controller.close();
        } else controller.enqueue(value);
      } catch (error) {
        end();
        controller.error(error);
      }
    },
    async cancel(reason) {
      end();
      await reader.cancel(reason);
    },
  });
  return new Response(wrapped, { status: response.status, headers: response.headers });
}
