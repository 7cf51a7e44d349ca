#!/usr/bin/env bun
import { replayRunner } from "@air/replay";
import { vizMain } from "@air/viz/command";
import { builtinRegistry } from "../builtins.ts";

process.exitCode = await vizMain(process.argv.slice(2), { replay: replayRunner(builtinRegistry()) });
