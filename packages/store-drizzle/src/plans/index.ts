import { notes, type PlanContext } from "./context.js";
import { createPlans } from "./create.js";
import { housekeepingPlans } from "./housekeeping.js";
import { orphanPlans } from "./orphans.js";
import { queuePlans } from "./queue.js";
import { readPlans } from "./reads.js";
import { settlePlans } from "./settle.js";
import { transitionPlans } from "./transitions.js";

/*
 * Every statement a store sends, one plan each (see `plan.ts`): a typed input with named
 * fields → the statement's text and values. The texts are built here once per store, for
 * its table, bounds and notify setting, and never change after.
 */

/** All of one store's statement plans. */
export function buildPlans(ctx: PlanContext) {
  const note = notes(ctx.notify);
  return {
    ...createPlans(ctx, note),
    ...readPlans(ctx),
    ...transitionPlans(ctx, note),
    ...settlePlans(ctx, note),
    ...queuePlans(ctx, note),
    ...orphanPlans(ctx, note),
    ...housekeepingPlans(ctx, note),
  };
}

/** One store's statement plans. */
export type Plans = ReturnType<typeof buildPlans>;
