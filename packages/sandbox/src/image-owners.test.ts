import { expect, test } from "bun:test";
import { ownersOf } from "./image-owners.ts";

test("ownersOf groups the recorded paths by owner; a path that could leave the WORKDIR or a bad owner is dropped", () => {
  const records = [
    "0:0\t",
    "0:0\tlib/data.py",
    "65534:65534\tlib/odd\tname\nwith newline",
    "0:0\t../etc/shadow",
    "0:0\t/etc/shadow",
    "0:0\ta/../../b",
    "root:root\tx",
    "0:0",
    "",
  ];
  const owners = ownersOf(new TextEncoder().encode(records.join("\0")));
  expect([...owners]).toEqual([
    ["0:0", ["", "lib/data.py"]],
    ["65534:65534", ["lib/odd\tname\nwith newline"]],
  ]);
});
