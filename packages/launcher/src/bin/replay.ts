#!/usr/bin/env bun
import { replayMain } from "@air/replay";
import { builtinRegistry } from "../builtins.ts";

process.exit(await replayMain(process.argv.slice(2), builtinRegistry()));
