/** Wraps an SSE body so that `onEnd` runs when the stream ends or its reader goes away. */
export function watchBody(response: Response, onEnd: () => void): Response {
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
