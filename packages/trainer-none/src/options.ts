import { z } from "@air/core";

/** `[trainer] plugin = "none"` takes no keys. */
export const noneTrainerConfig = z.object({});
