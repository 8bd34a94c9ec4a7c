/*
 * A statement plan: one statement's text, built once per store (table, bounds and notify
 * setting are spliced in), and a function from its named, typed input to the values sent
 * with it. The text is what the drivers prepare (one prepared statement per text and
 * connection), so a plan never rebuilds it per call.
 */

/** A statement ready to send: its text and its parameter values (`$1` is `values[0]`). */
export interface Statement {
  readonly text: string;
  readonly values: readonly unknown[];
}

/** The placeholder of each named parameter (`$1`, `$2`, …), for writing the text. */
export type Placeholders<I> = { readonly [K in keyof I]-?: string };

/** A plan: its input → the statement to send. `text` is the same for every input. */
export interface Plan<I> {
  (input: I): Statement;
  readonly text: string;
}

/**
 * Makes a plan. `order` lists the input's fields once each, in placeholder order (the first
 * is `$1`); `build` writes the text with `p.field` where each parameter goes. Referring to
 * a field missing from `order` throws when the plan is made (when the store opens), and
 * the driver refuses a listed one the text never uses.
 */
export function plan<I>(
  order: readonly (keyof I & string)[],
  build: (p: Placeholders<I>) => string,
): Plan<I> {
  const text = build(placeholders(order));
  const run = (input: I): Statement => ({ text, values: order.map((name) => input[name]) });
  return Object.assign(run, { text });
}

/** A plan without parameters. */
export function fixed(text: string): Plan<Record<string, never>> {
  const statement: Statement = { text, values: [] };
  return Object.assign(() => statement, { text });
}

function placeholders<I>(order: readonly (keyof I & string)[]): Placeholders<I> {
  if (new Set(order).size !== order.length)
    throw new Error(`a parameter is listed twice: ${order}`);
  const byName = new Map(order.map((name, i) => [name as string, `$${i + 1}`]));
  return new Proxy({} as Placeholders<I>, {
    get(_, name) {
      const placeholder = byName.get(String(name));
      if (placeholder === undefined) throw new Error(`no parameter named ${String(name)}`);
      return placeholder;
    },
  });
}
