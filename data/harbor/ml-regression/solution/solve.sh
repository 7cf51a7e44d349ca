#!/bin/bash
cd /app && python train.py --model forest
