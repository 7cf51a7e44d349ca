#!/bin/bash
# R² of /app/predictions.csv against the held-out labels in /tests/answers.csv (never in the agent's sandbox).
mkdir -p /logs/verifier
python3 - <<'PY'
import json
import numpy as np
import pandas as pd
out = {"reward": 0.0, "r2": 0.0, "rmse": -1.0, "valid": 0}
try:
    truth = pd.read_csv("/tests/answers.csv")
    pred = pd.read_csv("/app/predictions.csv")
    merged = truth.merge(pred, on="id", how="left", suffixes=("", "_pred"))
    if len(pred) == len(truth) and merged["y_pred"].notna().all():
        err = merged["y"] - merged["y_pred"]
        r2 = 1 - float((err ** 2).sum()) / float(((merged["y"] - merged["y"].mean()) ** 2).sum())
        out = {"reward": max(0.0, r2), "r2": r2, "rmse": float(np.sqrt((err ** 2).mean())), "valid": 1}
except Exception as e:
    print("invalid predictions:", e)
json.dump(out, open("/logs/verifier/reward.json", "w"))
print(out)
PY
