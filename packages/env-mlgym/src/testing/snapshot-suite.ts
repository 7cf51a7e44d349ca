import { expect, test } from "bun:test";
import type { MlgymSession } from "../session.ts";
import { exampleOf } from "./script.ts";
import { makeEnv } from "./suite.ts";

/** Tree-rollout support: a sandbox started from another's snapshot sees that workspace. */
export function snapshotSuite(runtime: "docker" | "local", enabled: boolean): void {
  test.skipIf(!enabled)(
    "a workspace snapshot starts a new sandbox in the same state",
    async () => {
      const { env } = await makeEnv(runtime, `air-test-snapshot-${runtime}-${process.pid}`);
      try {
        const example = await exampleOf(env, "apartmentRent");
        const parent = (await env.open(example, {
          rolloutId: "parent",
          signal: new AbortController().signal,
        })) as MlgymSession;
        await parent.step({ text: "", command: "python train.py --model mean && echo note > notes.txt" });
        const snapshot = await parent.sandbox.snapshot();
        await parent.close();
        const child = await env.open(
          { ...example, data: { ...example.data, snapshot } },
          { rolloutId: "child", signal: new AbortController().signal },
        );
        try {
          const ls = await child.step({ text: "", command: "cat notes.txt; ls" });
          expect(ls.observation).toStartWith(
            "note\nREADME.md\ndata/\nevaluate.py*\nnotes.txt\nsubmission.csv\ntrain.py\n",
          );
          const validate = await child.step({ text: "", command: "validate" });
          expect(validate.scores?.r2).toBeLessThan(0.01);
        } finally {
          await child.close();
        }
      } finally {
        await env.close?.();
      }
    },
    60_000,
  );

  test.skipIf(!enabled)(
    "fork(): a sibling starts in the same state and is isolated from its siblings",
    async () => {
      const { env } = await makeEnv(runtime, `air-test-fork-iso-${runtime}-${process.pid}`);
      const info = (rolloutId: string) => ({ rolloutId, signal: new AbortController().signal });
      try {
        expect(env.canFork).toBe(true);
        const example = await exampleOf(env, "apartmentRent");
        const parent = await env.open(example, info("p"));
        await parent.start();
        await parent.step({
          text: "",
          command:
            "echo shared > shared.txt && chmod 600 shared.txt && ln -s /etc/hostname link && mkdir -p sub",
        });
        await parent.step({ text: "", command: "cd sub" });
        const child = await parent.fork!();
        try {
          // the copy is the child's own (a mode-600 file of the parent's is readable and writable), links stay
          // links, and the task's read-only files stay read-only
          const own = await child.step({
            text: "",
            command: "echo more >> ../shared.txt && cat ../shared.txt && readlink ../link",
          });
          expect(own.observation).toStartWith("shared\nmore\n/etc/hostname\n");
          const locked = await child.step({ text: "", command: "echo x >> ../evaluate.py; echo rc=$?" });
          expect(locked.observation).toContain("rc=1");
          await child.step({ text: "", command: "echo mine > ../child.txt" });
          await parent.step({ text: "", command: "echo theirs > ../parent.txt" });
          const inChild = await child.step({ text: "", command: "ls .." });
          const inParent = await parent.step({ text: "", command: "ls .." });
          expect(inChild.observation).toContain("child.txt");
          expect(inChild.observation).toContain("shared.txt");
          expect(inChild.observation).not.toContain("parent.txt");
          expect(inParent.observation).toContain("parent.txt");
          expect(inParent.observation).toContain("shared.txt");
          expect(inParent.observation).not.toContain("child.txt");
          expect(inChild.observation).toMatch(/\(Current Step: 6, Remaining Steps: 14\)/);
          expect(inChild.observation).toMatch(/\(Current directory: \S+\/workspace\/sub\)/);
          const score = await child.step({
            text: "",
            command: "cd .. && python train.py --model mean && validate",
          });
          expect(score.scores?.r2).toBeLessThan(0.01);
          const none = await parent.step({ text: "", command: "ls ../submission.csv" });
          expect(none.observation).toContain("No such file");
        } finally {
          await child.close();
          await parent.close();
        }
      } finally {
        await env.close?.();
      }
    },
    90_000,
  );

  test.skipIf(!enabled)(
    "a forked session keeps the open file, directory and step count",
    async () => {
      const { env } = await makeEnv(runtime, `air-test-fork-${runtime}-${process.pid}`);
      try {
        const example = await exampleOf(env, "apartmentRent");
        const parent = (await env.open(example, {
          rolloutId: "p",
          signal: new AbortController().signal,
        })) as MlgymSession;
        await parent.step({ text: "", command: "open train.py 30" });
        await parent.step({ text: "", command: "cd data" });
        const snapshot = await parent.snapshot();
        await parent.close();
        expect(snapshot).toMatchObject({ openFile: "train.py", cwd: "data", step: 2 });
        const child = await env.open(
          { ...example, data: { ...example.data, snapshot } },
          { rolloutId: "c", signal: new AbortController().signal },
        );
        try {
          const next = await child.step({ text: "", command: "ls" });
          expect(next.observation).toStartWith(
            "test.csv*\ntrain.csv*\n(Current Step: 3, Remaining Steps: 17)",
          );
          expect(next.observation).toMatch(
            /\(Open file: \S+\/workspace\/train\.py\)\n\(Current directory: \S+\/workspace\/data\)/,
          );
          const scroll = await child.step({ text: "", command: "scroll_up" });
          expect(scroll.observation).toContain("[File: ");
        } finally {
          await child.close();
        }
      } finally {
        await env.close?.();
      }
    },
    60_000,
  );
}
