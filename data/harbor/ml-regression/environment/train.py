"""Baseline: a linear model. Usage: python train.py [--model linear|forest]"""
import sys

import pandas as pd
from sklearn.ensemble import RandomForestRegressor
from sklearn.linear_model import LinearRegression

model_name = sys.argv[2] if len(sys.argv) > 2 and sys.argv[1] == "--model" else "linear"
train = pd.read_csv("/app/data/train.csv")
test = pd.read_csv("/app/data/test.csv")
features = ["x1", "x2", "x3"]
model = RandomForestRegressor(n_estimators=100, random_state=0) if model_name == "forest" else LinearRegression()
model.fit(train[features], train["y"])
pd.DataFrame({"id": test["id"], "y": model.predict(test[features])}).to_csv("/app/predictions.csv", index=False)
print(f"wrote /app/predictions.csv with {model_name}")
