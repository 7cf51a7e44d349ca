#!/bin/bash
# Float reward through reward.json: the share of correct lines for 1..$FIZZBUZZ_N (from [verifier] env).
mkdir -p /logs/verifier
python3 - "$FIZZBUZZ_N" <<'PY'
import json, subprocess, sys
n = int(sys.argv[1])
want = ["FizzBuzz" if i % 15 == 0 else "Fizz" if i % 3 == 0 else "Buzz" if i % 5 == 0 else str(i) for i in range(1, n + 1)]
try:
    out = subprocess.run([sys.executable, "/app/fizzbuzz.py", str(n)], capture_output=True, text=True, timeout=20)
    got = out.stdout.splitlines()
    runs = 1 if out.returncode == 0 else 0
except Exception:
    got, runs = [], 0
correct = sum(1 for a, b in zip(got, want) if a.strip() == b)
json.dump({"reward": correct / n, "lines_correct": correct, "runs": runs}, open("/logs/verifier/reward.json", "w"))
PY
