#!/usr/bin/env bun
import { vizMain } from "../viz-command.ts";

process.exitCode = await vizMain(process.argv.slice(2));
