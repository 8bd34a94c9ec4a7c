// Every entry's public surface, pinned (see scripts/api-pin.mjs; update with `-u`).
import { describePublicApi } from "../../../scripts/api-pin.mjs";

describePublicApi(import.meta.url);
