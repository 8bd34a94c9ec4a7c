import { ANSWER_FORM_SCRIPT } from "./script/answer-form.js";
import { LIVE_UPDATES_SCRIPT } from "./script/live-updates.js";
import { PRELUDE_SCRIPT } from "./script/prelude.js";
import { SIGN_IN_SCRIPT } from "./script/sign-in.js";
import { TASK_DETAIL_SCRIPT } from "./script/task-detail.js";
import { TASK_LIST_SCRIPT } from "./script/task-list.js";
import { TRAFFIC_CHART_SCRIPT } from "./script/traffic-chart.js";
import { WIRING_SCRIPT } from "./script/wiring.js";

/**
 * The console page's script: plain DOM code, no framework, no build step. Kept as text
 * (String.raw, so it reads as the JavaScript it is) and served as `app.js`.
 *
 * It is one IIFE, written in parts by concern and joined here in page order. The parts'
 * functions are declarations, hoisted over the whole IIFE, so they call each other freely.
 */
export const CONSOLE_SCRIPT: string = [
  PRELUDE_SCRIPT,
  SIGN_IN_SCRIPT,
  TASK_LIST_SCRIPT,
  LIVE_UPDATES_SCRIPT,
  TASK_DETAIL_SCRIPT,
  ANSWER_FORM_SCRIPT,
  TRAFFIC_CHART_SCRIPT,
  WIRING_SCRIPT,
].join("");
