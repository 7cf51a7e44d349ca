export { type AppOptions, createApp, type VizApp } from "./app.ts";
export type { ComparisonView, ProfileChart } from "./compare.ts";
export type { Point } from "./derived.ts";
export type { ReplayJob } from "./pages/replay.ts";
export type { ReplayRunner } from "./replay.ts";
export { type ServeOptions, serve, type VizServer } from "./serve.ts";
